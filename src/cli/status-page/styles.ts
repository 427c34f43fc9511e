/**
 * The page's one stylesheet, inlined: system fonts, tabular figures, a light and a dark scheme. At a phone's width
 * nothing scrolls sideways: the figures go two by two, each stream becomes a card of label/value pairs on a
 * two-column grid (each value one element, aligned under its label), and each chart is shown in its narrow drawing.
 * Status colours always come with a word and a symbol.
 */
export const STYLES = `
:root{--bg:#f6f7f9;--card:#fff;--ink:#1c2330;--muted:#5d6878;--line:#e3e6eb;--ok:#1f8a4c;--ok-bg:#e5f5ec;
--warn:#a86400;--warn-bg:#fdf1dc;--bad:#c62a2f;--bad-bg:#fde8e8;--idle:#5d6878;--idle-bg:#eef0f3;--live:#2f6fd6;
--live-bg:#e6effc;--bar:#4f7fd9;--bar2:#37a36a;--accent:#2f6fd6}
@media (prefers-color-scheme:dark){:root{--bg:#12161d;--card:#1a2029;--ink:#e6e9ee;--muted:#9aa5b4;--line:#2b3340;
--ok:#4cc47f;--ok-bg:#173325;--warn:#e8a33a;--warn-bg:#3a2c12;--bad:#f06a6e;--bad-bg:#3d1a1c;--idle:#9aa5b4;
--idle-bg:#252c37;--live:#6b9cf0;--live-bg:#1b2a44;--bar:#6b9cf0;--bar2:#4cc47f;--accent:#6b9cf0}}
*{box-sizing:border-box}
html{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;font-size:15px;
line-height:1.45;color:var(--ink);background:var(--bg);-webkit-text-size-adjust:100%}
body{margin:0}
header.top{background:var(--card);border-bottom:1px solid var(--line)}
.wrap{max-width:1160px;margin:0 auto;padding:0 20px}
header.top .wrap{display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 16px;padding-top:16px;padding-bottom:14px}
h1{font-size:1.25rem;margin:0;letter-spacing:-.01em}
h1 b{color:var(--accent)}
.meta{color:var(--muted);font-size:.87rem;overflow-wrap:anywhere}
main.wrap{padding-top:18px;padding-bottom:40px}
h2{font-size:1.02rem;margin:0 0 2px;letter-spacing:-.005em}
.sub{color:var(--muted);font-size:.85rem;margin:0 0 12px}
section{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:16px 18px;margin:0 0 16px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(200px,1fr));gap:12px;margin:0 0 16px}
.card{background:var(--card);border:1px solid var(--line);border-radius:10px;padding:12px 14px}
.card .k{color:var(--muted);font-size:.78rem;text-transform:uppercase;letter-spacing:.05em}
.card .v{font-size:1.45rem;font-weight:650;font-variant-numeric:tabular-nums;margin-top:2px}
.card .v .pill{font-size:.75rem;vertical-align:middle}
.card .d{color:var(--muted);font-size:.84rem}
section.state{border-width:1px 1px 1px 6px}
section.state.ok{border-left-color:var(--ok)}section.state.warn{border-left-color:var(--warn)}
section.state.bad{border-left-color:var(--bad)}section.state.idle{border-left-color:var(--idle)}
section.state.live{border-left-color:var(--live)}
section.state h2{margin:0 0 6px}section.state h2 .pill{font-size:.9rem;padding:2px 11px 2px 9px}
.state-list{margin:0;padding:0;list-style:none}
.state-list li{padding:3px 0;overflow-wrap:anywhere}
.state-list li small{display:block}
.nowrap{white-space:nowrap}
.figs{display:flex;flex-wrap:wrap;gap:8px 24px;margin:4px 0 8px}
.fig .k{color:var(--muted);font-size:.8rem}.fig .v{font-weight:650;font-variant-numeric:tabular-nums}
.n,td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
table{border-collapse:collapse;width:100%;font-size:.92rem}
th,td{padding:8px 10px;border-bottom:1px solid var(--line);text-align:left;vertical-align:top}
thead th{color:var(--muted);font-weight:600;font-size:.78rem;text-transform:uppercase;letter-spacing:.04em;
border-bottom:1px solid var(--line);white-space:nowrap}
tbody tr:last-child th,tbody tr:last-child td{border-bottom:none}
tbody th{font-weight:600}
tr.has-err td{border-bottom:none;padding-bottom:2px}tr.err td{padding-top:0}
tr.err .reason{max-width:none}
small,.small{color:var(--muted);font-size:.8rem}
.reason{display:block;font-weight:400;color:var(--bad);font-size:.82rem;margin-top:3px;max-width:46ch;
overflow-wrap:anywhere}
.pill{display:inline-flex;align-items:center;gap:5px;border-radius:999px;padding:1px 9px 1px 7px;font-size:.82rem;
font-weight:600;white-space:nowrap}
.pill.ok{color:var(--ok);background:var(--ok-bg)}.pill.warn{color:var(--warn);background:var(--warn-bg)}
.pill.bad{color:var(--bad);background:var(--bad-bg)}.pill.idle{color:var(--idle);background:var(--idle-bg)}
.pill.live{color:var(--live);background:var(--live-bg)}
.fed{font-size:.84rem}
td[data-k=freshness],td[data-k=poll],td[data-k=lag]{white-space:nowrap}
svg.chart{width:100%;height:auto;display:block}
.chart-box.narrow{display:none}.chart-box .small{margin:2px 0 0}
svg .axis{fill:var(--muted);font-size:12px;font-family:inherit}
svg .tick,svg .base{stroke:var(--line);stroke-width:1}
svg .lane{stroke:var(--line);stroke-dasharray:2 4}
svg .now{stroke:var(--muted);stroke-width:1;stroke-dasharray:3 3}svg .now-label{font-weight:600;fill:var(--ink)}
svg .bar{fill:var(--bar)}svg .bar.high{fill:var(--warn)}
svg .limit{stroke:var(--bad);stroke-width:1.5;stroke-dasharray:6 4}
svg .limit-label{fill:var(--bad);font-size:12px;font-weight:600}
svg .empty{fill:var(--muted);font-size:13px}
svg .run.ok{fill:var(--ok)}svg .run.warn{fill:var(--warn)}svg .run.bad{fill:var(--bad)}svg .run.live{fill:var(--live)}
svg .received{fill:var(--bar)}svg .settled{fill:var(--bar2)}svg .refused{fill:var(--bad)}
svg .pending{fill:none;stroke:var(--warn);stroke-width:2}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:10px 0 0;padding:0;list-style:none;font-size:.82rem;
color:var(--muted)}
.legend i{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;vertical-align:-1px}
.legend i.bar{background:var(--bar)}.legend i.high{background:var(--warn)}
.legend i.limit{height:0;border-top:2px dashed var(--bad);border-radius:0;vertical-align:3px}
.legend i.ok{background:var(--ok)}.legend i.warn{background:var(--warn)}.legend i.bad{background:var(--bad)}
.legend i.live{background:var(--live)}.legend i.received{background:var(--bar)}.legend i.settled{background:var(--bar2)}
.legend i.refused{background:var(--bad)}.legend i.pending{height:0;border-top:2px solid var(--warn);border-radius:0;
vertical-align:3px}
.now{margin:10px 0 0;font-size:.92rem}
.now strong{font-variant-numeric:tabular-nums}
details{margin-top:10px}
summary{cursor:pointer;color:var(--accent);font-size:.86rem}
.live-note{color:var(--muted);font-size:.8rem}
@media (max-width:760px){.chart-box.wide{display:none}.chart-box.narrow{display:block}}
@media (max-width:640px){
 html{font-size:14px}.wrap{padding:0 12px}section{padding:12px}
 .cards{grid-template-columns:repeat(2,minmax(0,1fr));gap:8px}
 .card{padding:10px 12px}.card .v{font-size:1.25rem}
 table.streams thead{display:none}
 table.streams,table.streams tbody{display:block}
 table.streams tr{display:grid;grid-template-columns:repeat(2,minmax(0,1fr));gap:8px 14px;border:1px solid var(--line);
 border-radius:8px;margin:0 0 10px;padding:10px 12px}
 table.streams th{grid-column:1/-1;border:none;padding:0;font-size:1rem}
 table.streams td{display:block;border:none;padding:0;text-align:left;min-width:0;white-space:normal}
 table.streams td::before{content:attr(data-label);display:block;color:var(--muted);font-size:.72rem;
 text-transform:uppercase;letter-spacing:.04em}
 table.streams td .v{display:block;overflow-wrap:anywhere}
 table.runs .opt{display:none}
 table.runs th,table.runs td{padding:6px 4px}
 table.runs thead th{letter-spacing:0;font-size:.72rem}
 table.compact th,table.compact td{padding:5px 4px}table.compact .opt{display:none}
 table.compact thead th{letter-spacing:0;font-size:.7rem;white-space:normal}
}
`;
