// Small DOM helpers shared by the page's modules.

// $ finds the element with the given data-testid; the test hooks double as
// the page's own element references, so they cannot drift apart.
export function $(testid) {
  const node = document.querySelector(`[data-testid="${testid}"]`);
  if (!node) throw new Error(`missing element data-testid="${testid}"`);
  return node;
}

// el builds an element with attributes and children (nodes or text).
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false || v === "") continue;
    if (k === "value") node.value = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children) {
    if (c === undefined || c === null || c === "") continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const money = new Map();

export function formatMoney(amount, currency = "EUR") {
  if (!money.has(currency)) {
    money.set(currency, new Intl.NumberFormat("en-IE", { style: "currency", currency }));
  }
  return money.get(currency).format(amount);
}

// pretty formats JSON for the console panes.
export function pretty(value) {
  return JSON.stringify(value, null, 2);
}
