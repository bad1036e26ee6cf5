// Compiled by tsc --strict only: a handler is checked against the input its
// action's schema accepts. Each @ts-expect-error must find an error, or tsc
// fails, so these lines fail if the input were typed any.
import { useAction, type InputOf } from "@pling/surface/react";

export function Typed() {
  useAction({
    id: "stock.move",
    effect: "write",
    approval: "ask",
    inputSchema: {
      type: "object",
      properties: { sku: { type: "string" }, qty: { type: "integer" }, mode: { enum: ["in", "out"] }, tags: { type: "array", items: { type: "string" } } },
      required: ["sku", "qty"],
    },
  }, (input) => {
    const sku: string = input.sku;
    const qty: number = input.qty;
    const mode: "in" | "out" | undefined = input.mode;
    const tags: string[] | undefined = input.tags;
    // @ts-expect-error qty is a number
    const wrong: string = input.qty;
    // @ts-expect-error tags is not required
    const required: string[] = input.tags;
    // @ts-expect-error the schema has no such property
    input.price;
    return { sku, qty, mode, tags, wrong, required };
  });
  return null;
}

// The same type, for a plain executor that parses argsJson itself.
const schema = { type: "object", properties: { note: { type: "string" } }, required: ["note"] } as const;
export const parse = (argsJson: string): InputOf<typeof schema> => JSON.parse(argsJson);
// @ts-expect-error note is a string
export const n: number = parse("{}").note;
