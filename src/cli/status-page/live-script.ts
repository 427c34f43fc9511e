/**
 * The live page's only script (inline, no library): every 15 seconds (or `?refresh=<seconds>`, at least 1) it reads
 * `status.json`, the same document as `evsync status --json`. When the document changed beyond the passing of time,
 * the server-rendered `<main>` is fetched again and swapped in (charts included); the ages on the page move on in
 * any case. A failed refresh says so beside the time stamp and tries again at the next tick.
 */
import { span } from './html.js';

/** The document's fields that change with the clock alone (they do not make the page fetch itself again). */
const CLOCK_FIELDS = [
  'generatedAt',
  'freshnessSeconds',
  'ageSeconds',
  'sinceLastDeliverySeconds',
  'oldestPendingAgeSeconds',
  'inSeconds',
  'oldestSeconds',
  'behindSeconds',
  'seconds',
];

export const LIVE_SCRIPT = `(function () {
'use strict';
var span = ${span.toString()};
var CLOCK = ${JSON.stringify(CLOCK_FIELDS)};
var asked = Number(new URLSearchParams(location.search).get('refresh'));
var every = (asked >= 1 ? asked : 15) * 1000;
var last = null;
function shape(doc) {
  return JSON.stringify(doc, function (k, v) { return CLOCK.indexOf(k) >= 0 ? undefined : v; });
}
function say(text) {
  var note = document.getElementById('live');
  if (note) note.textContent = text;
}
function ages(nowMs) {
  document.querySelectorAll('[data-k="age"][data-at]').forEach(function (el) {
    var at = Date.parse(el.getAttribute('data-at').replace(' ', 'T') + 'Z');
    if (!isNaN(at)) el.textContent = span((nowMs - at) / 1000);
  });
  var stamp = document.getElementById('generated');
  if (stamp) {
    stamp.textContent = new Date(nowMs).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
    stamp.setAttribute('datetime', new Date(nowMs).toISOString());
  }
}
function ok(r) {
  if (!r.ok) throw new Error('HTTP ' + r.status);
  return r;
}
function swap() {
  return fetch(location.pathname + location.search, { cache: 'no-store' }).then(ok).then(function (r) {
    return r.text();
  }).then(function (html) {
    var next = new DOMParser().parseFromString(html, 'text/html').querySelector('main');
    var main = document.querySelector('main');
    if (next && main) main.replaceWith(next);
  });
}
function tick() {
  fetch('status.json', { cache: 'no-store', headers: { accept: 'application/json' } }).then(ok).then(function (r) {
    return r.json();
  }).then(function (doc) {
    var s = shape(doc);
    var changed = s !== last;
    last = s;
    return (changed ? swap() : Promise.resolve()).then(function () {
      ages(Date.parse(doc.generatedAt));
      document.documentElement.setAttribute('data-refreshed', doc.generatedAt);
      say('refreshes every ' + every / 1000 + ' s');
    });
  }).catch(function (err) {
    say('not refreshed: ' + err.message + ' (trying again)');
  }).then(function () {
    setTimeout(tick, every);
  });
}
setTimeout(tick, every);
})();`;
