// Describing the page: which applications answer discover, the chosen
// one's description (refused whole over the panel's bounds), and what the
// panel shows of it.

import { findCapability } from "./pling-client.js";
import { RECORDS_PER_PAGE, BOUNDS } from "./panel-bounds.js";
import { renderCall } from "./panel-call.js";
import { renderCapabilities } from "./panel-capabilities.js";
import { ask } from "./panel-connection.js";
import { renderRecords, renderContext } from "./panel-context.js";
import { $, el } from "./panel-dom.js";
import { showOutcome, showClientError } from "./panel-outcome.js";
import { state } from "./panel-state.js";
import { setStatus, showTransport } from "./panel-status.js";
import { pageText, pageCode } from "./panel-words.js";

// Describing the page

export async function refresh() {
  const gen = ++state.generation;
  setStatus("connecting", "Looking for an agent surface on the page…");
  let found;
  try {
    found = await ask({ type: "pling.discover" });
  } catch (err) {
    if (gen !== state.generation) return;
    clearDescription();
    if (err.code === "NO_SURFACE") setStatus("no-surface", "This page offers no agent surface (nothing answered).", err.code);
    else if (err.code === "NOT_SCRIPTABLE") setStatus("not-scriptable", err.message, err.code);
    else setStatus("error", err.message, err.code);
    return;
  }
  if (gen !== state.generation) return;
  const apps = found.apps.slice(0, 20).map((f) => f.app);
  if (!apps.includes(state.app)) state.app = apps[0] ?? null;
  const picker = $("ext-app");
  picker.replaceChildren(...apps.map((a) => el("option", { value: a ?? "" }, a === null ? "(unnamed)" : pageText(a, 60, "span").textContent)));
  picker.value = state.app ?? "";
  picker.closest("label").hidden = apps.length < 2;
  await describe(gen);
}

export async function describe(gen = state.generation) {
  let answer;
  try {
    answer = await ask({ type: "pling.describe", app: state.app });
  } catch (err) {
    if (gen !== state.generation) return;
    setStatus("error", err.message, err.code);
    showClientError(err);
    return;
  }
  if (gen !== state.generation) return;
  const { outcome } = answer;
  showTransport(answer.transport, answer.privateRefused);
  if (outcome.kind !== "success") {
    // What was shown stays (the page refused to describe itself, it did not
    // go away); a call from it is checked by the page again.
    setStatus("error", "The page's surface did not describe itself; its answer is under Result.", outcome.error.code);
    showOutcome(outcome);
    return;
  }
  const problem = descriptionProblem(outcome.description);
  if (problem) {
    clearDescription();
    setStatus("error", `Not shown: ${problem}`, "BOUND_EXCEEDED");
    return;
  }
  const d = outcome.description;
  state.description = d;
  state.stale = false;
  const c = d.context;
  const list = (c.records ?? []).slice(0, RECORDS_PER_PAGE);
  const total = Number.isInteger(c.recordsTotal) ? c.recordsTotal : list.length;
  state.records = { offset: 0, list, total, nextOffset: list.length < total ? list.length : null };
  // The status is the panel's own signal: the app's name, the page's
  // words, goes in the summary beside it.
  state.appName = answer.app;
  setStatus("connected", "Connected to the page's agent surface.");
  try {
    renderDescription();
  } catch (err) {
    // Whatever the page sent, the panel says what happened instead of hanging.
    clearDescription();
    setStatus("error", `The panel could not show this description: ${err && err.message}`, "RENDER_FAILED");
  }
}

// descriptionProblem names the first bound a description passes, or "".
function descriptionProblem(d) {
  if (d.capabilities.length > BOUNDS.capabilities) {
    return `the page lists ${d.capabilities.length} capabilities, more than the ${BOUNDS.capabilities} this panel shows.`;
  }
  return "";
}

export function clearDescription() {
  state.description = null;
  state.selected = null;
  state.rendering += 1;
  $("ext-capabilities").replaceChildren();
  $("ext-call").hidden = true;
  $("ext-form").replaceChildren();
  $("ext-summary").textContent = "";
  $("ext-records").replaceChildren();
  $("ext-records-range").textContent = "";
  $("ext-records-prev").disabled = true;
  $("ext-records-next").disabled = true;
  $("ext-feedback").replaceChildren();
  $("ext-state").textContent = "";
}

function renderDescription() {
  const d = state.description;
  const c = d.context;
  $("ext-summary").replaceChildren(
    state.appName === null ? "" : el("span", { "data-testid": "ext-app-name" }, "App ", pageCode(state.appName, 60), " · "),
    [
      `${d.capabilities.length} ${d.capabilities.length === 1 ? "capability" : "capabilities"}`,
      `${Number.isInteger(c.recordsTotal) ? c.recordsTotal : (c.records ?? []).length} records`,
    ].join(" · "),
  );
  if (state.selected && !findCapability(d, state.selected)) state.selected = null;
  renderCapabilities(d.capabilities);
  renderCall();
  renderRecords();
  renderContext();
}
