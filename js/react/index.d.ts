// Types of the React binding (index.js).
import type { ReactNode } from "react";
import type { Action, AgentSurface, CallContext, ExecResult, Feedback, ListenOptions, Region, SurfaceOptions, SurfaceRecord, Unavailable } from "../pling-surface.js";

type ValueOrGetter<T> = T | (() => T);

export interface SurfaceProviderProps extends Omit<SurfaceOptions, "registry" | "execute"> {
  children?: ReactNode;
  /** surface.listen's options, or false for a surface only the page calls. Default {}. */
  listen?: ListenOptions | false;
  route?: ValueOrGetter<string | undefined>;
  regions?: ValueOrGetter<Region[] | undefined>;
  state?: ValueOrGetter<Record<string, unknown> | undefined>;
  feedback?: ValueOrGetter<Feedback[] | undefined>;
  unavailable?: ValueOrGetter<Unavailable[] | undefined>;
}

export declare function SurfaceProvider(props: SurfaceProviderProps): ReactNode;

/** The provider's surface. */
export declare function useSurface(): AgentSurface;

/**
 * The value a JSON Schema given `as const` accepts, for the schemas input
 * schemas are usually made of: objects with properties and required,
 * arrays with items, strings, numbers, integers, booleans, null, enum and
 * const. Anything else is unknown.
 */
export type InputOf<S> =
  S extends { readonly const: infer C } ? C
  : S extends { readonly enum: readonly (infer E)[] } ? E
  : S extends { readonly type: "object" } ? ObjectOf<S>
  : S extends { readonly type: "array"; readonly items: infer I } ? InputOf<I>[]
  : S extends { readonly type: "string" } ? string
  : S extends { readonly type: "number" | "integer" } ? number
  : S extends { readonly type: "boolean" } ? boolean
  : S extends { readonly type: "null" } ? null
  : unknown;

type ObjectOf<S> = S extends { readonly properties: infer P }
  ? Flatten<
      { -readonly [K in keyof P as K extends Required<S> ? K : never]: InputOf<P[K]> } &
      { -readonly [K in keyof P as K extends Required<S> ? never : K]?: InputOf<P[K]> }
    >
  : Record<string, unknown>;
type Required<S> = S extends { readonly required: readonly (infer R)[] } ? R : never;
type Flatten<T> = { [K in keyof T]: T[K] };

/** An action whose inputSchema is kept as written (`as const`), so that its handler's input is typed. */
export type TypedAction<S> = Omit<Action, "inputSchema"> & { readonly inputSchema?: S };

/** What a handler gets: the input, parsed, and the call's ids. */
export type Handler<S> = (input: InputOf<S>, context: CallContext) => ExecResult | Promise<ExecResult>;

/**
 * Registers action while the component is mounted; handler runs each
 * accepted invoke of it. With the schema written `as const`, the handler's
 * input is the type the schema accepts.
 */
export declare function useAction<const S>(action: TypedAction<S>, handler: Handler<S>): void;

/** Registers the records the component shows, while it is mounted. */
export declare function useRecords(records: readonly SurfaceRecord[]): void;
