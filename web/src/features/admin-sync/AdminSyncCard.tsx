import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Typography from '@mui/material/Typography';
import { useReducer, useRef } from 'react';
import { loadBackend } from '@/lib/backend';
import { useToast } from '@/lib/toast/ToastProvider';
import { adminSyncReducer } from './adminSyncMachine';
import { adminSyncMessages } from './adminSyncMessages';
import { runAdminSync } from './runAdminSync';

export interface AdminSyncCardProps {
  title: string;
  description: string;
}

/** The operator's card that pushes stored sign-ups to the e-mail marketing service. */
export function AdminSyncCard({ title, description }: AdminSyncCardProps) {
  const [state, send] = useReducer(adminSyncReducer, 'idle');
  const running = useRef(false);
  const toast = useToast();
  const syncing = state === 'syncing';

  async function handleSync() {
    if (running.current) return;
    running.current = true;
    try {
      toast(await runAdminSync(loadBackend, send));
    } finally {
      running.current = false;
    }
  }

  return (
    <Card component="section" aria-labelledby="admin-sync-title">
      <CardContent sx={{ p: { xs: 3, sm: 4 } }}>
        <Typography id="admin-sync-title" variant="h2" sx={{ fontSize: '1.375rem', mb: 1 }}>
          {title}
        </Typography>
        <Typography color="text.secondary" sx={{ mb: 3 }}>
          {description}
        </Typography>
        <Box>
          <Button variant="contained" onClick={handleSync} disabled={syncing}>
            {syncing ? adminSyncMessages.button.syncing : adminSyncMessages.button.idle}
          </Button>
        </Box>
      </CardContent>
    </Card>
  );
}
