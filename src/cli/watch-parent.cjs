// Preloaded (`node --require`) into the child that `tokenmarket start` and `index` run with a heap
// limit (heap.ts), so that it runs before any module of the service is loaded: a launcher killed
// at any moment (SIGKILL, which it cannot forward) must not leave the service running without it.
//
// The launcher's pid comes in TOKENMARKET_HEAP_PARENT. The check runs once at once (the launcher
// may have died while this process was being created: it was then adopted by init or a
// subreaper) and then every CHECK_MS. Node has no parent-death signal (prctl), and an IPC
// channel's `disconnect` is only heard once a listener is installed, which modules loading for a
// second or more delay; the parent pid is always current.
//
// On the launcher's death this process asks itself to stop (SIGTERM: the service's orderly
// shutdown once it is installed, the default exit before), and SIGKILLs itself should that take
// longer than FORCE_MS. Its embedded Postgres gets a signal of its own when this process dies
// (src/embedded-postgres: setpriv's parent-death signal), and the devnet node leaves when its
// IPC channel closes.
"use strict";

const CHECK_MS = 100;
const FORCE_MS = 30_000;

const parent = Number(process.env.TOKENMARKET_HEAP_PARENT);
delete process.env.TOKENMARKET_HEAP_PARENT;

if (Number.isInteger(parent) && parent > 0) {
  let timer;
  const check = () => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    setTimeout(() => process.kill(process.pid, "SIGKILL"), FORCE_MS).unref();
    process.kill(process.pid, "SIGTERM");
  };
  timer = setInterval(check, CHECK_MS);
  timer.unref();
  check();
}
