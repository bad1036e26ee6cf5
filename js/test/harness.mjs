// What the suites run by hostbridge's runJSSuite share: assertions, and
// runOne, which Go calls for each test.

export function assert(cond, msg) {
  if (!cond) throw new Error(msg);
}

export function eq(got, want, msg) {
  const g = JSON.stringify(got);
  const w = JSON.stringify(want);
  if (g !== w) throw new Error(`${msg}: got ${g}, want ${w}`);
}

export async function rejects(promise, check, msg) {
  try {
    await promise;
  } catch (e) {
    check(e);
    return;
  }
  throw new Error(`${msg}: did not reject`);
}

export function throwsType(fn, msg) {
  try {
    fn();
  } catch (e) {
    assert(e instanceof TypeError, `${msg}: threw ${e && e.name}, want TypeError`);
    return;
  }
  throw new Error(`${msg}: did not throw`);
}

export const tick = (ms = 0) => new Promise((r) => setTimeout(r, ms));

/** Runs one test; resolves to null, or to the failure's text. */
export async function runOne(tc, ctx) {
  try {
    // Go calls runOne: let that call return first, so that the test runs
    // as page code does, with no Go code on the stack.
    await undefined;
    await tc.fn(ctx);
    return null;
  } catch (e) {
    return e && e.stack ? String(e.stack) : String(e);
  }
}
