// Preloaded into firebase-tools by the launcher (node --require): if the launcher disappears without stopping it
// (kill -9, a crash), this process is re-parented, and it then stops itself as on Ctrl-C, so the emulators, their
// function workers and java never outlive the launcher. Plain CommonJS because it runs before any loader.
'use strict';

const launcher = process.ppid;
const CHECK_EVERY_MS = 1000;
// firebase-tools' clean shutdown takes a few seconds; past this, its whole process group is killed.
const FORCE_AFTER_MS = 15000;

// The launcher reads this process's output through pipes. Once it is gone, a write would fail with EPIPE and
// crash firebase-tools halfway through its shutdown, leaving its function workers behind.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

// The launcher started this process as the leader of its own group: the group is this stack's emulators.
const killGroup = () => {
  try {
    process.kill(-process.pid, 'SIGKILL');
  } catch {
    // Nothing left.
  }
};

const timer = setInterval(() => {
  if (process.ppid === launcher) return;
  clearInterval(timer);
  // Whatever firebase-tools' shutdown leaves in the group (a worker it lost track of) goes when it exits.
  process.on('exit', killGroup);
  process.kill(process.pid, 'SIGINT');
  setTimeout(killGroup, FORCE_AFTER_MS).unref();
}, CHECK_EVERY_MS);
timer.unref();
