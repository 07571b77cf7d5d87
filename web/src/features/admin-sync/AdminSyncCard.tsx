import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Card from '@mui/material/Card';
import CardContent from '@mui/material/CardContent';
import Typography from '@mui/material/Typography';
import { useState } from 'react';
import { loadBackend } from '@/lib/backend';
import { useToast } from '@/lib/toast/toast';
import { adminSyncMessages } from './adminSyncMessages';
import { runAdminSync } from './runAdminSync';

export interface AdminSyncCardProps {
  title: string;
  description: string;
}

/** The operator's card that pushes stored sign-ups to the e-mail marketing service. */
export function AdminSyncCard({ title, description }: AdminSyncCardProps) {
  // One fact: a sync is running. It drives the button's "Syncing..." label and its disabled state; a click
  // is a discrete event, so React renders the disabled button before a second click can be handled.
  const [syncing, setSyncing] = useState(false);
  const toast = useToast();

  async function handleSync() {
    if (syncing) return;
    setSyncing(true);
    try {
      toast(await runAdminSync(loadBackend));
    } finally {
      setSyncing(false);
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
