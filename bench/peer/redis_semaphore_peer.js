// warden-bench's peer run: the same lock scenarios as warden's S1/S2/S3,
// taken with redis-semaphore's Mutex over ioredis, so that warden is measured
// against another library on the same server in the same run.
//
// A benchmark dependency only: warden-bench starts this file with Node when
// --peer DIR is given, DIR being where `npm install --prefix DIR
// redis-semaphore ioredis` put the packages (passed as NODE_PATH).
//
// Talks to warden-bench by lines. On stdout: "ready <versions>" once
// connected, or "missing <what>" (and exit 3) when a package cannot be
// loaded; then one "result ..." line per scenario. On stdin: "run <name>
// <workers> <locks> <seconds> <key prefix>" runs one scenario and answers its
// result; "quit" (or end of input) closes the connection and exits. The bench
// reads the server's CPU and command counters before it sends "run" and after
// the result comes back.
//
// Environment: WARDEN_PEER_HOST, WARDEN_PEER_PORT, WARDEN_PEER_PASSWORD,
// WARDEN_PEER_USERNAME, WARDEN_PEER_DB.
'use strict';

const readline = require('readline');

let Mutex;
let Redis;
try {
  Mutex = require('redis-semaphore').Mutex;
  Redis = require('ioredis');
} catch (e) {
  process.stdout.write(`missing ${String(e.message).split('\n')[0]}\n`);
  process.exit(3);
}

function versionOf(name) {
  try {
    return require(`${name}/package.json`).version;
  } catch (e) {
    return 'unknown';
  }
}

// Every field on one line, as key=value with no spaces in the values.
function line(kind, fields) {
  const parts = [kind];
  for (const [key, value] of Object.entries(fields)) parts.push(`${key}=${value}`);
  return parts.join(' ') + '\n';
}

function cpuSeconds(usage) {
  return (usage.user + usage.system) / 1e6;
}

// `workers` async workers on the one ioredis connection (as warden's threads
// share one Client); worker i takes lock (i + k) % locks on its k-th pair,
// each lock through a Mutex of its own per worker, created once. The critical
// section is empty; an occupied flag per lock catches two holders at once.
async function runScenario(client, name, workers, locks, seconds, prefix) {
  const occupied = new Array(locks).fill(false);
  const mutexes = [];
  for (let w = 0; w < workers; ++w) {
    const mine = [];
    for (let l = 0; l < locks; ++l) {
      // redis-semaphore's defaults (lockTimeout 10 s, retryInterval 10 ms,
      // refresh at 80 % of the lock timeout) but a long acquire timeout: a
      // contended acquire must wait, not fail.
      mine.push(new Mutex(client, `${prefix}${name}:${l}`, {acquireTimeout: 600000}));
    }
    mutexes.push(mine);
  }
  let stop = false;
  let pairsInWindow = 0;
  let pairsAll = 0;
  let overlaps = 0;
  let errors = 0;
  let firstError = '';
  const latencies = [];
  const worker = async (w) => {
    for (let k = 0; !stop; ++k) {
      const l = (w + k) % locks;
      const mutex = mutexes[w][l];
      const start = process.hrtime.bigint();
      try {
        await mutex.acquire();
        if (occupied[l]) ++overlaps;
        occupied[l] = true;
        occupied[l] = false;
        await mutex.release();
      } catch (e) {
        ++errors;
        if (firstError === '') firstError = String(e.message).replace(/\s+/g, '_');
        continue;
      }
      ++pairsAll;
      if (!stop) {
        ++pairsInWindow;
        if (latencies.length < 1000000) latencies.push(Number(process.hrtime.bigint() - start) / 1000);
      }
    }
  };
  const cpuStart = process.cpuUsage();
  const started = process.hrtime.bigint();
  const running = [];
  for (let w = 0; w < workers; ++w) running.push(worker(w));
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  stop = true;
  const windowS = Number(process.hrtime.bigint() - started) / 1e9;
  await Promise.all(running);
  const cpu = cpuSeconds(process.cpuUsage(cpuStart));
  latencies.sort((a, b) => a - b);
  const at = (q) => (latencies.length === 0 ? -1 : latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]);
  return line('result', {
    name,
    window_s: windowS.toFixed(6),
    pairs_in_window: pairsInWindow,
    pairs_all: pairsAll,
    client_cpu_s: cpu.toFixed(6),
    p50_us: at(0.5).toFixed(1),
    p99_us: at(0.99).toFixed(1),
    overlaps,
    errors,
    first_error: firstError === '' ? '-' : firstError,
  });
}

async function main() {
  const options = {
    host: process.env.WARDEN_PEER_HOST || '127.0.0.1',
    port: Number(process.env.WARDEN_PEER_PORT || 6379),
    db: Number(process.env.WARDEN_PEER_DB || 0),
    maxRetriesPerRequest: 0,
  };
  if (process.env.WARDEN_PEER_PASSWORD) options.password = process.env.WARDEN_PEER_PASSWORD;
  if (process.env.WARDEN_PEER_USERNAME) options.username = process.env.WARDEN_PEER_USERNAME;
  const client = new Redis(options);
  await client.ping();
  // One pair first, so the release script is loaded before any window.
  const warm = new Mutex(client, `warden-bench-peer-warm-up:${process.pid}`);
  await warm.acquire();
  await warm.release();
  process.stdout.write(line('ready', {
    node: process.version,
    'redis-semaphore': versionOf('redis-semaphore'),
    ioredis: versionOf('ioredis'),
  }));
  const input = readline.createInterface({input: process.stdin});
  for await (const text of input) {
    const words = text.trim().split(/\s+/);
    if (words[0] === 'run' && words.length === 6) {
      const [, name, workers, locks, seconds, prefix] = words;
      process.stdout.write(await runScenario(client, name, Number(workers), Number(locks), Number(seconds), prefix));
    } else if (words[0] === 'quit') {
      break;
    } else if (words[0] !== '') {
      process.stdout.write(line('error', {unknown: words[0]}));
    }
  }
  client.disconnect();
}

main().catch((e) => {
  process.stdout.write(line('error', {message: String(e.message).replace(/\s+/g, '_')}));
  process.exit(1);
});
