// Preloaded into every source script (node --require): refuses any
// connection or DNS lookup that is not loopback, so no library can reach
// the network (telemetry pings, pricing downloads, vendor exporters).
'use strict';
const net = require('node:net');
const dns = require('node:dns');

const loopbackName = (h) => h === undefined || h === null || h === '' || h === 'localhost' ||
  /^127\./.test(h) || h === '::1' || h === '[::1]' || h === '0:0:0:0:0:0:0:1';

function blocked(what, host) {
  const err = new Error(`convtrace guard: ${what} to non-loopback host ${JSON.stringify(host)} refused`);
  err.code = 'ECONNREFUSED';
  if (process.env.FW_GUARD_VERBOSE) process.stderr.write(err.message + '\n');
  return err;
}

function hostOf(args) {
  const a = args[0];
  if (Array.isArray(a)) return hostOf(a);
  if (a && typeof a === 'object') return a.path ? 'localhost' : (a.host || a.hostname || 'localhost');
  if (typeof a === 'string' && isNaN(Number(a))) return 'localhost'; // unix socket path
  return typeof args[1] === 'string' ? args[1] : 'localhost';
}

const origConnect = net.Socket.prototype.connect;
net.Socket.prototype.connect = function (...args) {
  const host = hostOf(args);
  if (!loopbackName(host)) {
    const err = blocked('connection', host);
    process.nextTick(() => this.destroy(err));
    return this;
  }
  return origConnect.apply(this, args);
};

const origLookup = dns.lookup;
dns.lookup = function (host, opts, cb) {
  if (typeof opts === 'function') { cb = opts; opts = {}; }
  if (!loopbackName(host)) {
    process.nextTick(() => cb(blocked('DNS lookup', host)));
    return;
  }
  return origLookup.call(dns, host, opts, cb);
};
const origPLookup = dns.promises.lookup;
dns.promises.lookup = function (host, opts) {
  if (!loopbackName(host)) return Promise.reject(blocked('DNS lookup', host));
  return origPLookup.call(dns.promises, host, opts);
};
for (const fn of ['resolve', 'resolve4', 'resolve6', 'resolveAny', 'resolveTxt', 'resolveSrv', 'resolveCname']) {
  const orig = dns[fn];
  if (typeof orig !== 'function') continue;
  dns[fn] = function (host, ...rest) {
    const cb = rest[rest.length - 1];
    if (!loopbackName(host)) { process.nextTick(() => cb(blocked('DNS ' + fn, host))); return; }
    return orig.call(dns, host, ...rest);
  };
}
