// The two DOM helpers every part of the panel builds with. A leaf.

export const $ = (id) => document.querySelector(`[data-testid="${id}"]`);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  node.append(...children.filter((c) => c !== undefined && c !== null && c !== false));
  return node;
}
