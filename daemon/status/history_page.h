#pragma once

#include <string_view>

namespace vigil {

// The status page's history view (`#history`), served inside the page after its script
// (statusPage(): kStatusPage, this, kStatusPageEnd) and using its helpers (here, json, refresh,
// when, dayText, sameDay, clock) and its "vigil-status" event (each /api/status). One local day per
// screen, newest first, from /api/events?since&until (that day's start and end in the browser's
// time zone, as ISO UTC) with the camera and zone filters (from the page's /api/status, zones also
// from the events shown), 50 a page and "load older" with `before`. The same filters are applied
// here again and a page is merged by event id, so that a server that ignores them (the in-memory
// list of 50) shows the right events and no duplicates. Each event is a thumbnail of its snapshot
// (lazy, in a fixed 16:9 box, a placeholder without one) that opens the full picture; a thumbnail
// that loaded carries data-natural-width, and the view says how wide the page is (body
// data-scroll-width), for the tests at phone width.
inline constexpr std::string_view kHistoryView = R"html(<style>
  #history { padding: 0 12px 16px; }
  #history[hidden] { display: none; }
  #history .controls { display: flex; flex-wrap: wrap; gap: 8px; align-items: center;
                       padding: 12px 0; }
  #history .controls > * { font: inherit; background: #222; color: #eee; border: 1px solid #444;
                           border-radius: 4px; padding: 4px 8px; min-width: 0;
                           max-width: 100%; }
  #history .controls button:disabled { color: #666; }
  #history .state { color: #888; padding: 6px 0; }
  #history-events { list-style: none; margin: 0; padding: 0; display: grid; gap: 10px;
                    grid-template-columns: repeat(auto-fill, minmax(min(160px, 100%), 1fr)); }
  #history-events li { background: #1c1c1c; border-radius: 6px; overflow: hidden; min-width: 0; }
  #history-events .shot { display: block; position: relative; aspect-ratio: 16 / 9;
                          background: #000; }
  #history-events .shot img { position: absolute; inset: 0; width: 100%; height: 100%;
                              object-fit: cover; cursor: zoom-in; }
  #history-events .shot.none { display: flex; align-items: center; justify-content: center;
                               color: #666; }
  #history-events .meta { padding: 6px 8px; display: grid; gap: 1px; overflow-wrap: anywhere; }
  #history-older { margin: 12px 0; font: inherit; background: #222; color: #eee;
                   border: 1px solid #444; border-radius: 4px; padding: 6px 14px; }
  #history-older[hidden] { display: none; }
  #viewer { position: fixed; inset: 0; background: rgba(0, 0, 0, 0.9); display: flex;
            align-items: center; justify-content: center; cursor: zoom-out; z-index: 10; }
  #viewer[hidden] { display: none; }
  #viewer img { max-width: 100%; max-height: 100%; object-fit: contain; }
</style>
<section id="history" hidden>
  <div class="controls">
    <button id="history-prev" title="previous day">&#9664;</button>
    <input type="date" id="history-day" aria-label="day">
    <button id="history-next" title="next day">&#9654;</button>
    <button id="history-today">today</button>
    <select id="history-camera" aria-label="camera"><option value="">all cameras</option></select>
    <select id="history-zone" aria-label="zone"><option value="">all zones</option></select>
  </div>
  <div id="history-state" class="state"></div>
  <ul id="history-events"></ul>
  <button id="history-older" hidden>load older</button>
</section>
<div id="viewer" hidden><img alt="event picture"></div>
<script>
"use strict";
const past = {day: null, events: [], last: null, generation: 0, cameras: [], zones: new Map()};
const HISTORY_PAGE = 50;
const $ = (id) => document.getElementById(id);

function isoDay(d) {
  return d.getFullYear() + "-" + String(d.getMonth() + 1).padStart(2, "0") + "-" +
      String(d.getDate()).padStart(2, "0");
}
// The chosen local day's first and last millisecond.
function dayBounds() {
  const [y, m, d] = past.day.split("-").map(Number);
  return [new Date(y, m - 1, d), new Date(y, m - 1, d, 23, 59, 59, 999)];
}
function duration(e) {
  const s = Math.round((new Date(e.end) - new Date(e.start)) / 1000);
  return s < 60 ? s + " s" : s < 3600 ? Math.floor(s / 60) + " min " + (s % 60) + " s" :
      Math.floor(s / 3600) + " h " + Math.floor(s % 3600 / 60) + " min";
}

function option(select, value, text) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  select.appendChild(o);
}
// The zone filter: the chosen camera's zones from /api/status and from the events shown.
function fillZones() {
  const select = $("history-zone");
  const camera = $("history-camera").value;
  const names = new Set(past.zones.get(camera) || []);
  for (const e of past.events) if (e.camera === camera && e.zone) names.add(e.zone);
  select.disabled = !camera;
  const sorted = [...names].sort();
  if (sorted.join("\n") === [...select.options].slice(1).map(o => o.value).join("\n")) return;
  const kept = select.value;
  select.replaceChildren();
  option(select, "", "all zones");
  for (const z of sorted) option(select, z, z);
  select.value = names.has(kept) ? kept : "";
}
function fillCameras(s) {
  past.zones = new Map(s.cameras.map(c => [c.name, (c.zones || []).map(z => z.name)]));
  const names = s.cameras.map(c => c.name);
  if (names.join("\n") !== past.cameras.join("\n")) {
    past.cameras = names;
    const select = $("history-camera");
    const kept = select.value;
    select.replaceChildren();
    option(select, "", "all cameras");
    for (const n of names) option(select, n, n);
    select.value = names.includes(kept) ? kept : "";
  }
  fillZones();
}

function eventCard(e) {
  const li = document.createElement("li");
  li.dataset.event = e.id;
  let shot;
  if (e.snapshot) {
    shot = document.createElement("a");
    shot.className = "shot";
    shot.href = here(e.snapshot);
    const img = document.createElement("img");
    img.loading = "lazy";
    img.alt = e.camera + " at " + when(e.start);
    img.onload = () => { img.dataset.naturalWidth = String(img.naturalWidth); };
    img.src = here(e.snapshot);
    shot.appendChild(img);
    shot.addEventListener("click", (ev) => { ev.preventDefault(); view(shot.href); });
  } else {
    shot = document.createElement("div");
    shot.className = "shot none";
    shot.textContent = "no picture";
  }
  const meta = document.createElement("div");
  meta.className = "meta";
  const line = (text, cls) => {
    const span = document.createElement("span");
    span.textContent = text;
    if (cls) span.className = cls;
    meta.appendChild(span);
  };
  line(e.camera + (e.zone ? " / " + e.zone : ""), "where");
  const end = e.end && new Date(e.end);
  line(when(e.start) + (end ? " to " + (sameDay(end, new Date(e.start)) ? clock(end) :
      when(e.end)) + " (" + duration(e) + ")" : " (going on)"), "time");
  line("up to " + e.max_count + " person(s), score " + e.max_score.toFixed(2), "label");
  li.append(shot, meta);
  return li;
}

function view(src) {
  $("viewer").querySelector("img").src = src;
  $("viewer").hidden = false;
}

function query(before) {
  const [since, until] = dayBounds();
  const p = new URLSearchParams({since: since.toISOString(), until: until.toISOString(),
                                 limit: String(HISTORY_PAGE)});
  if ($("history-camera").value) p.set("camera", $("history-camera").value);
  if ($("history-zone").value) p.set("zone", $("history-zone").value);
  if (before) p.set("before", before);
  return "api/events?" + p;
}
// What this view asked for, checked here too: on the day (overlapping it), camera, zone.
function wanted(e) {
  const [since, until] = dayBounds();
  const camera = $("history-camera").value, zone = $("history-zone").value;
  return new Date(e.start) <= until && (!e.end || new Date(e.end) >= since) &&
      (!camera || e.camera === camera) && (!zone || e.zone === zone);
}

// The first page of the day (`older`: the next page after the last event shown).
async function loadHistory(older) {
  const generation = older ? past.generation : ++past.generation;
  const state = $("history-state"), list = $("history-events"), more = $("history-older");
  if (!older) {
    past.events = [];
    past.last = null;
    list.replaceChildren();
    more.hidden = true;
    state.textContent = "loading…";
  } else {
    more.disabled = true;
    more.textContent = "loading…";
  }
  state.hidden = false;
  let page;
  try {
    page = await json(query(older ? past.last : null));
  } catch (e) {
    if (generation === past.generation) state.textContent = "cannot load events: " + e.message;
    return;
  } finally {
    more.disabled = false;
    more.textContent = "load older";
  }
  if (generation !== past.generation) return;  // the filters changed meanwhile
  const seen = new Set(past.events.map(e => e.id));
  const fresh = page.filter(e => !seen.has(e.id) && wanted(e));
  for (const e of fresh) list.appendChild(eventCard(e));
  past.events.push(...fresh);
  if (page.length) past.last = page[page.length - 1].id;
  // Another page when this one was full and brought something new (a server that ignores
  // `before` gives the same page again).
  more.hidden = !(page.length >= HISTORY_PAGE && page.some(e => !seen.has(e.id)));
  state.textContent = "no events on " + dayText(dayBounds()[0]);
  state.hidden = past.events.length > 0;
  fillZones();
  document.body.dataset.scrollWidth = String(document.scrollingElement.scrollWidth);
}

function setDay(day) {
  const today = isoDay(new Date());
  past.day = day && day <= today ? day : today;
  $("history-day").value = past.day;
  $("history-day").max = today;
  $("history-next").disabled = past.day >= today;
  loadHistory(false);
}
function shiftDay(by) {
  const [since] = dayBounds();
  setDay(isoDay(new Date(since.getFullYear(), since.getMonth(), since.getDate() + by)));
}

// The page's views: `#history`, else the live one.
function route() {
  const historyShown = location.hash === "#history";
  document.body.dataset.view = historyShown ? "history" : "live";
  $("history").hidden = !historyShown;
  if (historyShown) setDay(past.day);
  else refresh();
}

$("history-prev").addEventListener("click", () => shiftDay(-1));
$("history-next").addEventListener("click", () => shiftDay(1));
$("history-today").addEventListener("click", () => setDay(null));
$("history-day").addEventListener("change", (ev) => setDay(ev.target.value));
$("history-camera").addEventListener("change", () => { fillZones(); loadHistory(false); });
$("history-zone").addEventListener("change", () => loadHistory(false));
$("history-older").addEventListener("click", () => loadHistory(true));
$("viewer").addEventListener("click", () => { $("viewer").hidden = true; });
document.addEventListener("keydown", (ev) => { if (ev.key === "Escape") $("viewer").hidden = true; });
document.addEventListener("vigil-status", (ev) => fillCameras(ev.detail));
window.addEventListener("resize", () => {
  document.body.dataset.scrollWidth = String(document.scrollingElement.scrollWidth);
});
window.addEventListener("hashchange", route);
document.body.dataset.view = location.hash === "#history" ? "history" : "live";
if (location.hash === "#history") route();
</script>
)html";

}  // namespace vigil
