import { setGlobalOptions } from 'firebase-functions/v2/options';

// Imported first by every function module: the options are read when a function is defined. maxInstances
// caps what a burst or abuse can cost; one instance serves up to 80 calls at once.
setGlobalOptions({ region: 'us-central1', maxInstances: 10, memory: '256MiB' });
