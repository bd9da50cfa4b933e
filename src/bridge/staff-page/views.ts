/**
 * The staff page's HTML: a layout, the login form, the front page (search and what needs
 * staff), a player's page (status, pending, windows with their resolve form, resolved
 * windows, last gives) and the health page (with a chart drawn as inline SVG on the
 * server). Every value goes through `html`, which escapes it; no script anywhere.
 *
 * @module
 * @internal
 */
import type { JournalWindow, PlayerDeliveryStatus, DeliveryLoopStats } from '../../index.js';
import type { JournalInspection, PendingDelivery } from '../../delivery/staff/index.js';
import type { RecentGive, Sample, Signal, StaffDesk } from './desk.js';
import { exact, html, type Html } from './html.js';
import type { StaffSession } from './sessions.js';

/** The most rows a list shows; the rest are counted ("and N more"). */
export const MAX_ROWS = 100;

const iso = (ms: number) => (Number.isFinite(ms) && Math.abs(ms) < 8.64e15 ? new Date(ms).toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : String(ms));
const ago = (ms: number) => (ms < 60_000 ? `${Math.round(ms / 1000)} s` : ms < 3_600_000 ? `${Math.round(ms / 60_000)} min` : ms < 172_800_000 ? `${Math.round(ms / 3_600_000)} h` : `${Math.round(ms / 86_400_000)} d`);
const playerLink = (name: string) => html`<a href="/player?name=${encodeURIComponent(name)}">${name}</a>`;

/** At most MAX_ROWS rows of `items`, then a line counting the others. */
function capped<T>(items: readonly T[], row: (item: T) => Html, columns: number, newest = false): Html {
  const shown = newest ? items.slice(-MAX_ROWS).reverse() : items.slice(0, MAX_ROWS);
  const more = items.length - shown.length;
  return html`${shown.map(row)}${more > 0 ? html`<tr><td colspan="${columns}" class="more">and ${more} more not shown (${newest ? 'older' : 'newer'})</td></tr>` : ''}`;
}

/** The page around `body`. */
export function layout(title: string, body: Html, session?: StaffSession): Html {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · teamgames bridge</title><link rel="stylesheet" href="/style.css"></head>
<body><header><a class="brand" href="/">teamgames bridge · staff</a>${
    session === undefined
      ? ''
      : html`<nav><a href="/">Players</a> <a href="/health">Health</a> <span class="who">${session.name} (${session.role === 'resolve' ? 'may resolve' : 'read-only'})</span>
<form method="post" action="/logout" class="inline"><input type="hidden" name="csrf" value="${session.csrf}"><button type="submit">Log out</button></form></nav>`
  }</header>
<main>${body}</main></body></html>`;
}

/** The login form, with a message when a try failed. */
export function loginPage(message?: string, name = ''): Html {
  return layout(
    'Log in',
    html`<h1>Staff log in</h1>${message === undefined ? '' : html`<p class="error" role="alert">${message}</p>`}
<form method="post" action="/login" class="card">
<label>Name <input name="name" autocomplete="username" required maxlength="64" value="${name}"></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required maxlength="1024"></label>
<button type="submit">Log in</button></form>`,
  );
}

function pendingRows(pending: readonly PendingDelivery[], now: number, withPlayer: boolean): Html {
  const what = (p: PendingDelivery) => (p.item !== undefined ? html`${p.item.product_name} × ${p.item.quantity_to_grant}` : p.reward !== undefined ? html`${p.reward.reward_name} × ${p.reward.give_amount} (vote reward)` : html`<em>${p.state === 'claiming' ? 'a claim in flight' : 'a vote reward claim in flight'}</em>`);
  const status = (p: PendingDelivery) =>
    p.lastError?.stuck === true ? html`<span class="bad">stuck</span>` : p.lastError !== undefined ? html`<span class="warn">failing</span>` : p.sending !== undefined ? html`<span class="warn">sending</span>` : html`waiting`;
  return html`<table><thead><tr>${withPlayer ? html`<th>Player</th>` : ''}<th>What</th><th>State</th><th>Age</th><th>Last failure</th></tr></thead><tbody>${capped(
    pending,
    (p) =>
      html`<tr>${withPlayer ? html`<td>${playerLink(p.playerName)}</td>` : ''}<td>${what(p)}<div class="id">${p.deliveryId}</div></td><td>${status(p)} <small>${p.state}</small></td><td>${ago(Math.max(0, now - p.recordedAt))}</td><td>${
        p.lastError === undefined ? '' : html`${p.lastError.message} <small>(${p.lastError.attempts} attempts, last ${iso(p.lastError.at)})</small>`
      }</td></tr>`,
    withPlayer ? 5 : 4,
  )}</tbody></table>`;
}

/** What a window puts at stake: its span, cause, and what it names. */
function stake(w: JournalWindow, gives: readonly RecentGive[]): Html {
  const within = gives.filter((g) => g.player === w.playerName && g.at >= w.from && g.at <= w.to);
  return html`<dl class="stake"><dt>Span</dt><dd>${iso(w.from)} → ${iso(w.to)} (${ago(Math.max(0, w.to - w.from))})</dd>
<dt>Cause</dt><dd>${w.cause}</dd>${w.reward === undefined ? '' : html`<dt>Vote reward</dt><dd>${w.reward}</dd>`}${w.points === undefined ? '' : html`<dt>Points</dt><dd>${w.points}</dd>`}${
    w.command === undefined ? '' : html`<dt>Command</dt><dd><pre>${w.command.split("\n").map((c, i) => html`${i > 0 ? html`\n` : ""}${c}`)}</pre></dd>`
  }${within.length === 0 ? '' : html`<dt>Given in the span</dt><dd>${within.slice(-10).map((g) => html`<div>${g.what} × ${g.units} (${g.outcome})</div>`)}</dd>`}${w.node === undefined ? '' : html`<dt>Node</dt><dd>${w.node}</dd>`}</dl>`;
}

/** The resolve form of one window (only for a session that may resolve). */
function resolveForm(w: JournalWindow, session: StaffSession): Html {
  if (session.role !== 'resolve') return html`<p class="muted">Your account is read-only: ask a staff member who may resolve.</p>`;
  return html`<form method="post" action="/resolve" class="resolve"><input type="hidden" name="csrf" value="${session.csrf}"><input type="hidden" name="window" value="${exact(w.deliveryId)}"><input type="hidden" name="player" value="${exact(w.playerName)}">
<label>What you found and did (required) <textarea name="note" required maxlength="2000" rows="3"></textarea></label>
<button type="submit">Resolve as ${session.name}</button></form>`;
}

function windowCard(w: JournalWindow, session: StaffSession, gives: readonly RecentGive[]): Html {
  const r = w.resolution;
  return html`<article class="card window ${w.state}" id="${w.deliveryId}"><h3>${w.state === 'unverified' ? 'Open window' : 'Resolved window'} <span class="id">${w.deliveryId}</span></h3>${stake(w, gives)}${
    r === undefined ? resolveForm(w, session) : html`<p class="resolution">Resolved by <strong class="by">${r.by}</strong> at ${iso(r.at)}:</p><blockquote class="note">${r.note}</blockquote>`
  }</article>`;
}

function cards(windows: readonly JournalWindow[], session: StaffSession, gives: readonly RecentGive[], newest: boolean): Html {
  const shown = newest ? windows.slice(-MAX_ROWS).reverse() : windows.slice(0, MAX_ROWS);
  const more = windows.length - shown.length;
  return html`${shown.map((w) => windowCard(w, session, gives))}${more > 0 ? html`<p class="more">and ${more} more not shown (${newest ? 'older' : 'newer'}); resolve these first, or use teamgames journal windows</p>` : ''}`;
}

function givesTable(gives: readonly RecentGive[], withPlayer: boolean): Html {
  if (gives.length === 0) return html`<p class="muted">None since the bridge started.</p>`;
  return html`<table><thead><tr><th>When</th>${withPlayer ? html`<th>Player</th>` : ''}<th>What</th><th>Outcome</th></tr></thead><tbody>${capped(
    gives,
    (g) =>
      html`<tr><td>${iso(g.at)}</td>${withPlayer ? html`<td>${playerLink(g.player)}</td>` : ''}<td>${g.what} × ${g.units}${g.kind === 'vote' ? ' (vote reward)' : ''}<div class="id">${g.deliveryId}</div></td><td>${
        g.outcome === 'given' ? html`<span class="ok">given</span>` : html`<span class="bad">failed</span> ${g.error ?? ''}`
      }</td></tr>`,
    withPlayer ? 4 : 3,
    true,
  )}</tbody></table>`;
}

function searchForm(query: string): Html {
  return html`<form method="get" action="/" class="search" role="search"><label>Find a player <input type="search" name="q" value="${query}" maxlength="64" placeholder="part of a name, any case"></label><button type="submit">Search</button></form>`;
}

/** The front page: the search and its results, then what needs staff now. */
export function homePage(session: StaffSession, query: string, matches: readonly string[] | undefined, inspection: JournalInspection, desk: StaffDesk, now: number, online: ReadonlySet<string>): Html {
  const stuck = inspection.pending.filter((p) => p.lastError?.stuck === true);
  // The loop counts a blocked player while they are online.
  const blocked = [...desk.blocked].filter(([player]) => online.has(player));
  const results =
    matches === undefined
      ? ''
      : matches.length === 0
        ? html`<p class="muted">No player in the journal or online has a name containing “${query}”.</p>`
        : html`<ul class="players">${matches.slice(0, MAX_ROWS).map((m) => html`<li>${playerLink(m)}</li>`)}</ul>${matches.length > MAX_ROWS ? html`<p class="more">and ${matches.length - MAX_ROWS} more: type more of the name</p>` : ''}`;
  return layout(
    'Players',
    html`<h1>Players</h1>${searchForm(query)}${results}
<section><h2>Open windows <span class="count">${inspection.openWindows.length}</span></h2>${
      inspection.openWindows.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<table><thead><tr><th>Player</th><th>Cause</th><th>Span</th></tr></thead><tbody>${capped(inspection.openWindows, (w) => html`<tr><td>${playerLink(w.playerName)}</td><td>${w.cause}</td><td>${iso(w.from)} → ${iso(w.to)}</td></tr>`, 3)}</tbody></table>`
    }</section>
<section><h2>Blocked players <span class="count">${blocked.length}</span></h2>${
      blocked.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<table><thead><tr><th>Player</th><th>Runs end with</th><th>Since</th></tr></thead><tbody>${capped(blocked, ([player, b]) => html`<tr><td>${playerLink(player)}</td><td>${b.code} (${b.runs} runs)</td><td>${iso(b.at)}</td></tr>`, 3)}</tbody></table>`
    }</section>
<section><h2>Stuck items <span class="count">${stuck.length}</span></h2>${stuck.length === 0 ? html`<p class="muted">None.</p>` : pendingRows(stuck, now, true)}</section>
<section><h2>Pending <span class="count">${inspection.pending.length}</span></h2>${inspection.pending.length === 0 ? html`<p class="muted">Nothing waits.</p>` : pendingRows(inspection.pending, now, true)}</section>
<section><h2>Last gives</h2>${givesTable(desk.recent, true)}</section>`,
    session,
  );
}

/** A player's page. `notice` is a line shown first (a resolution done, a refusal). */
export function playerPage(session: StaffSession, status: PlayerDeliveryStatus, inspection: JournalInspection, desk: StaffDesk, now: number, notice?: Html): Html {
  const gives = desk.recent.filter((g) => g.player === status.playerName);
  const blocked = status.blocked;
  return layout(
    status.playerName,
    html`${searchForm('')}${notice ?? ''}<h1 class="player">${status.playerName}</h1>
<p class="facts"><span class="${status.online ? 'ok' : 'muted'}">${status.online ? 'online' : 'offline'}</span>${status.running ? ' · delivering now' : ''}${
      blocked === undefined ? '' : html` · <span class="bad">blocked: ${blocked.code}, ${blocked.runs} runs since ${iso(blocked.since)}</span>`
    }${status.lastError === undefined ? '' : html` · last error: ${status.lastError instanceof Error ? status.lastError.message : String(status.lastError)}`}</p>
${status.journalError === undefined ? '' : html`<p class="error">The journal could not be read: ${status.journalError.message}</p>`}
<section><h2>Open windows <span class="count">${inspection.openWindows.length}</span></h2>${inspection.openWindows.length === 0 ? html`<p class="muted">None.</p>` : cards(inspection.openWindows, session, desk.recent, false)}</section>
<section><h2>Pending <span class="count">${inspection.pending.length}</span></h2>${inspection.pending.length === 0 ? html`<p class="muted">Nothing waits.</p>` : pendingRows(inspection.pending, now, false)}</section>
<section><h2>Resolved windows <span class="count">${inspection.resolvedWindows.length}</span></h2>${inspection.resolvedWindows.length === 0 ? html`<p class="muted">None.</p>` : cards(inspection.resolvedWindows, session, desk.recent, true)}</section>
<section><h2>Last gives</h2>${givesTable(gives, false)}</section>`,
    session,
  );
}

function signalRow(name: string, signal: Signal, extra?: Html): Html {
  const failing = signal.failedAt !== undefined && (signal.okAt === undefined || signal.failedAt > signal.okAt);
  return html`<tr><th>${name}</th><td>${failing ? html`<span class="bad">failing</span>` : signal.okAt === undefined ? html`<span class="muted">no answer yet</span>` : html`<span class="ok">up</span>`}${extra ?? ''}</td><td>${signal.okAt === undefined ? '' : html`last good ${iso(signal.okAt)}`}${signal.failedAt === undefined ? '' : html`<br>last failure ${iso(signal.failedAt)}: ${signal.failure ?? ''}`}</td></tr>`;
}

/** Pending items and open windows over time, as an SVG line chart. */
export function chart(samples: readonly Sample[]): Html {
  const W = 600;
  const H = 160;
  if (samples.length < 2) return html`<p class="muted">The chart fills as the bridge runs (one point a minute).</p>`;
  const first = (samples[0] as Sample).at;
  const span = Math.max(1, (samples[samples.length - 1] as Sample).at - first);
  let top = 1;
  for (const s of samples) top = Math.max(top, s.pending, s.openWindows);
  const line = (pick: (s: Sample) => number) => samples.map((s) => `${(((s.at - first) / span) * W).toFixed(1)},${(H - (pick(s) / top) * (H - 10)).toFixed(1)}`).join(' ');
  return html`<svg class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="pending items and open windows over time"><title>Pending items (blue) and open windows (red), ${iso(first)} to now</title>
<line x1="0" y1="${H}" x2="${W}" y2="${H}" class="axis"></line><text x="4" y="12" class="label">${top}</text>
<polyline points="${line((s) => s.pending)}" class="pending"></polyline><polyline points="${line((s) => s.openWindows)}" class="windows"></polyline></svg>
<p class="legend"><span class="key pending">pending</span> <span class="key windows">open windows</span> since ${iso(first)}</p>`;
}

/** The health page. */
export function healthPage(session: StaffSession, stats: DeliveryLoopStats, desk: StaffDesk, journalProblem: string | undefined, sink: string): Html {
  return layout(
    'Health',
    html`<h1>Health</h1><table class="health"><tbody>
${signalRow('Store', desk.store, stats.paused ? html` <span class="bad">the key is refused: deliveries paused</span>` : undefined)}
${signalRow('Journal', journalProblem === undefined ? desk.journal : { ...desk.journal, failedAt: desk.now(), failure: journalProblem })}
${signalRow(`Game (${sink})`, desk.game)}
</tbody></table>
<h2>Now</h2><dl class="stats"><dt>Online</dt><dd>${stats.online}</dd><dt>Pending (online players)</dt><dd>${stats.pending}</dd><dt>Blocked players</dt><dd>${stats.blocked}</dd><dt>Items backing off</dt><dd>${stats.backingOff}</dd><dt>Open windows</dt><dd>${desk.openWindows}</dd><dt>Windows reported since start</dt><dd>${stats.unverified}</dd><dt>Failed runs since start</dt><dd>${stats.errors}</dd><dt>Poll interval</dt><dd>${Math.round(stats.intervalMs / 1000)} s</dd><dt>Checkout hints held</dt><dd>${stats.hints}${
      stats.sharedHintsError === undefined ? '' : html` <span class="bad">the journal's hints cannot be read: ${stats.sharedHintsError instanceof Error ? stats.sharedHintsError.message : String(stats.sharedHintsError)}</span>`
    }</dd></dl>
<h2>Over time</h2>${chart(desk.samples)}`,
    session,
  );
}

/** A page with one message (an error, a refusal). */
export function messagePage(title: string, message: Html, session?: StaffSession): Html {
  return layout(title, html`<h1>${title}</h1>${message}<p><a href="/">Back to the players</a></p>`, session);
}

/** The stylesheet (no inline style anywhere: the CSP allows only this). */
export const STYLESHEET = `:root{color-scheme:light dark;--fg:#1b1f24;--bg:#f6f7f9;--card:#fff;--line:#d8dce2;--muted:#667;--ok:#1a7f37;--warn:#9a6700;--bad:#cf222e;--accent:#0969da}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--bg:#0d1117;--card:#161b22;--line:#30363d;--muted:#8b949e;--ok:#3fb950;--warn:#d29922;--bad:#f85149;--accent:#58a6ff}}
*{box-sizing:border-box}body{margin:0;font:16px/1.45 system-ui,sans-serif;color:var(--fg);background:var(--bg)}
header{display:flex;flex-wrap:wrap;gap:.5rem 1rem;align-items:center;justify-content:space-between;padding:.6rem 1rem;background:var(--card);border-bottom:1px solid var(--line)}
header a{color:var(--accent);text-decoration:none}.brand{font-weight:600}nav{display:flex;flex-wrap:wrap;gap:.75rem;align-items:center}.who{color:var(--muted)}
main{max-width:60rem;margin:0 auto;padding:1rem}h1{font-size:1.5rem;margin:.5rem 0 1rem;overflow-wrap:anywhere}h2{font-size:1.15rem;margin:1.5rem 0 .5rem}h3{font-size:1rem;margin:0 0 .5rem}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:1rem;margin:.75rem 0}.window.unverified{border-left:4px solid var(--bad)}.window.resolved{border-left:4px solid var(--ok)}
form.card,form.resolve,form.search{display:grid;gap:.6rem;max-width:28rem}form.search{grid-template-columns:1fr auto;align-items:end;max-width:none}label{display:grid;gap:.25rem}
input,textarea,button{font:inherit;padding:.55rem .6rem;border:1px solid var(--line);border-radius:6px;background:var(--bg);color:var(--fg);min-height:2.75rem}
button{background:var(--accent);color:#fff;border:0;cursor:pointer}form.inline{display:inline}form.inline button{min-height:auto;padding:.3rem .6rem}
table{width:100%;border-collapse:collapse;background:var(--card);border:1px solid var(--line);border-radius:8px;overflow:hidden}th,td{text-align:left;padding:.45rem .6rem;border-bottom:1px solid var(--line);vertical-align:top;overflow-wrap:anywhere}
.id{font:12px ui-monospace,monospace;color:var(--muted);overflow-wrap:anywhere}.muted{color:var(--muted)}.ok{color:var(--ok)}.warn{color:var(--warn)}.bad,.error{color:var(--bad)}
.count{font-size:.85rem;color:var(--muted);font-weight:400}.more{color:var(--muted);font-style:italic}.players{padding-left:1.2rem}.players li{margin:.3rem 0}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:.5rem 0}dt{color:var(--muted)}dd{margin:0;overflow-wrap:anywhere}
pre,blockquote{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}blockquote{border-left:3px solid var(--line);padding:.3rem .7rem}
.chart{width:100%;height:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}.chart polyline{fill:none;stroke-width:2}.chart .pending{stroke:var(--accent)}.chart .windows{stroke:var(--bad)}.chart .axis{stroke:var(--line)}.chart .label{fill:var(--muted);font-size:11px}
.key::before{content:"";display:inline-block;width:.8em;height:.8em;margin-right:.3em;border-radius:2px}.key.pending::before{background:var(--accent)}.key.windows::before{background:var(--bad)}
@media (max-width:40rem){main{padding:.6rem}table,thead,tbody,tr,th,td{display:block}thead{display:none}tr{border-bottom:1px solid var(--line);padding:.3rem 0}td{border:0;padding:.2rem .6rem}form.search{grid-template-columns:1fr}}
`;
