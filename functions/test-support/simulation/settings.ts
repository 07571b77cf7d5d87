// The queues' retry settings of a simulation, set before the handlers load (delivery/queue.ts reads them then), as
// the stack tests shorten them: a delivery task gives up after 5 attempts and 4 hours (two days in production), so outages of hours
// see tasks given up and the reconciler's net re-drive them. Imported first by the simulation's test file.
process.env.DELIVERY_MAX_ATTEMPTS ??= '5';
process.env.DELIVERY_MAX_RETRY_SECONDS ??= '14400';
process.env.DELIVERY_MIN_BACKOFF_SECONDS ??= '10';
