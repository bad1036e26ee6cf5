// errors.js: the codes of what the client itself reports, and its one error
// type. Kept apart from the surface's own codes: a caller must tell "the
// page said no" from "the client gave up".

/** Codes of the errors the client itself raises (never a surface's codes). */
export const ClientErrorCode = Object.freeze({
  TIMEOUT: "TIMEOUT", // no reply in time, after every allowed attempt
  NAVIGATED: "NAVIGATED", // the page navigated away or was unloaded
  CLOSED: "CLOSED", // the surface closed the channel, or the client was closed
  REFUSED: "REFUSED", // the page refused the private channel
  NO_SURFACE: "NO_SURFACE", // nothing answered a connect or discover
  ABORTED: "ABORTED", // the caller's AbortSignal fired
  INVALID_ARGUMENT: "INVALID_ARGUMENT", // a call the client will not send
  RECORD_REQUIRED: "RECORD_REQUIRED", // a folded template called without a record id
  RECORD_NOT_REFERENCEABLE: "RECORD_NOT_REFERENCEABLE", // the id is not among the recordIds described
  ID_REUSED: "ID_REUSED", // a request id offered for a different intent
  PROTOCOL_FAILURE: "PROTOCOL_FAILURE", // a helper that returns data got ok:false; see .outcome
  REPLY_REFUSED: "REPLY_REFUSED", // request(): the page answered, and the answer was refused unread; see .bound
  UNSUPPORTED_ENVIRONMENT: "UNSUPPORTED_ENVIRONMENT", // no window, no crypto, an opaque origin
});

/** Codes the client puts on outcomes it had to classify conservatively. */
export const OutcomeCode = Object.freeze({
  MALFORMED_RESPONSE: "MALFORMED_RESPONSE", // protocol-error: the reply does not follow the protocol
  REPLY_OUT_OF_BOUNDS: "REPLY_OUT_OF_BOUNDS", // protocol-error: the reply is larger or deeper than the client reads
  APPROVAL_DENIED: "APPROVAL_DENIED", // business-error: a person denied the approval
  APPROVAL_STATUS_UNKNOWN: "APPROVAL_STATUS_UNKNOWN", // business-error: never read as a grant
});

/**
 * The one error type the client raises. `code` is one of ClientErrorCode.
 * `effectUnknown` is true when an invoke was sent and no reply was read: it
 * may have run. `request` is the envelope that was sent, for `client.retry`.
 */
export class SurfaceClientError extends Error {
  constructor(code, message, details = {}) {
    super(message);
    this.name = "SurfaceClientError";
    this.code = code;
    this.effectUnknown = details.effectUnknown === true;
    this.attempts = details.attempts || 0;
    if (details.request !== undefined) this.request = details.request;
    if (details.outcome !== undefined) this.outcome = details.outcome;
    if (details.bound !== undefined) this.bound = details.bound;
  }

  // Extension messaging and logs carry plain data, not Error objects.
  toJSON() {
    const out = { name: this.name, code: this.code, message: this.message, effectUnknown: this.effectUnknown, attempts: this.attempts };
    if (this.request && typeof this.request.id === "string") out.requestId = this.request.id;
    return out;
  }
}

export function clientError(code, message, details) {
  return new SurfaceClientError(code, message, details);
}
