package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"pling.dev/agent/internal/devserver"
	"pling.dev/agent/internal/redistest"
	"pling.dev/agent/redisstate"
)

// sharedPage opens the shared-limits page with query q in a new tab of
// parent (the test browser when nil) and waits for its surface.
func sharedPage(t *testing.T, parent context.Context, base, q string) *tab {
	t.Helper()
	return pageIn(t, parent, base+"/e2e/shared.html?"+q, "window.__sharedReady === true")
}

// pageIn opens url in a new tab of parent (the test browser when nil) and
// waits until ready is true in the page. Chromium's log of the backend's
// refusals at /pling/state is not a problem of the page.
func pageIn(t *testing.T, parent context.Context, url, ready string) *tab {
	t.Helper()
	if parent == nil {
		parent = browser
	}
	tabCtx, cancelTab := chromedp.NewContext(parent)
	if err := chromedp.Do(tabCtx); err != nil {
		cancelTab()
		t.Fatalf("open tab: %v", err)
	}
	ctx, cancel := context.WithTimeout(tabCtx, testTimeout)
	p := &tab{ctx: ctx}
	t.Cleanup(func() {
		cancel()
		cancelTab()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, msg := range p.problems {
			// The backend's refusals (503 with Redis down, 401 without a
			// login) are answers the tests ask for; Chromium logs them.
			if strings.HasPrefix(msg, "log (network)") && strings.Contains(msg, "/pling/state") {
				continue
			}
			t.Errorf("page reported: %s", msg)
		}
	})
	if err := chromedp.Listen(tabCtx, p.onEvent); err != nil {
		t.Fatalf("listen: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		t.Fatalf("navigate: %v", err)
	}
	waitPage(t, p, ready)
	return p
}

// uniqueApp names an app no earlier run has used: the browser profile and
// its IndexedDB live as long as the test binary.
func uniqueApp(name string) string {
	return fmt.Sprintf("%s-%d", name, time.Now().UnixNano())
}

func tally(codes ...[]string) map[string]int {
	out := map[string]int{}
	for _, cs := range codes {
		for _, c := range cs {
			out[c]++
		}
	}
	return out
}

// burstAll sends ids(i) from every tab at once and returns each tab's codes.
func burstAll(t *testing.T, tabs []*tab, ids func(tab int) []string) [][]string {
	t.Helper()
	out := make([][]string, len(tabs))
	var wg sync.WaitGroup
	for i, p := range tabs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := chromedp.Run(p.ctx, chromedp.Evaluate[[]string](`window.__shared.burst(`+js(ids(i))+`)`, chromedp.EvalAwaitPromise))
			if err != nil {
				t.Errorf("tab %d: %v", i, err)
			}
			out[i] = v
		}()
	}
	wg.Wait()
	return out
}

func executedIn(t *testing.T, tabs ...*tab) []string {
	t.Helper()
	var all []string
	for _, p := range tabs {
		all = append(all, evalPage[[]string](t, p, `window.__shared.executed`)...)
	}
	sort.Strings(all)
	return all
}

// Three tabs of one origin with shared: "indexeddb" draw on one budget:
// 30 requests at once against a limit of 10 admit exactly 10.
func TestSharedIndexedDBOneBudgetAcrossTabs(t *testing.T) {
	q := "max=10&window=60000&app=" + uniqueApp("budget")
	tabs := []*tab{sharedPage(t, nil, siteURL, q), sharedPage(t, nil, siteURL, q), sharedPage(t, nil, siteURL, q)}
	codes := burstAll(t, tabs, func(i int) []string {
		ids := make([]string, 10)
		for j := range ids {
			ids[j] = fmt.Sprintf("t%d-%d", i, j)
		}
		return ids
	})
	got := tally(codes...)
	if got["ok"] != 10 || got["RATE_LIMITED"] != 20 {
		t.Fatalf("answers by code over three tabs: %v, want 10 ok and 20 RATE_LIMITED", got)
	}
	if n := len(executedIn(t, tabs...)); n != 10 {
		t.Fatalf("executions: %d, want 10", n)
	}
}

// An invoke, a reload, the same id again: the claim outlived the page.
func TestSharedIndexedDBReplayAcrossReload(t *testing.T) {
	q := "max=100&app=" + uniqueApp("reload")
	p := sharedPage(t, nil, siteURL, q)
	if got := evalPage[[]string](t, p, `window.__shared.burst(["once"])`); len(got) != 1 || got[0] != "ok" {
		t.Fatalf("first invoke: %v", got)
	}
	before := evalPage[[]string](t, p, `window.__shared.executed`)
	if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitPage(t, p, "window.__sharedReady === true && window.__shared.executed.length === 0")
	if got := evalPage[[]string](t, p, `window.__shared.burst(["once"])`); len(got) != 1 || got[0] != "REPLAY_DETECTED" {
		t.Fatalf("the same id after a reload: %v, want REPLAY_DETECTED", got)
	}
	after := evalPage[[]string](t, p, `window.__shared.executed`)
	if len(before)+len(after) != 1 {
		t.Fatalf("executions: %v before the reload, %v after, want one in all", before, after)
	}
}

// Two tabs race one id, 50 times over: each id runs exactly once, and the
// tab that loses is told REPLAY_DETECTED.
func TestSharedIndexedDBTwoTabsRace(t *testing.T) {
	q := "max=1000&app=" + uniqueApp("race")
	tabs := []*tab{sharedPage(t, nil, siteURL, q), sharedPage(t, nil, siteURL, q)}
	var codes [2][]string
	for round := 0; round < 50; round++ {
		id := fmt.Sprintf("race-%d", round)
		got := burstAll(t, tabs, func(int) []string { return []string{id} })
		if tally(got...)["ok"] != 1 || tally(got...)["REPLAY_DETECTED"] != 1 {
			t.Fatalf("round %d: tab 1 %v, tab 2 %v; want one ok and one REPLAY_DETECTED", round, got[0], got[1])
		}
		codes[0] = append(codes[0], got[0]...)
		codes[1] = append(codes[1], got[1]...)
	}
	exec := executedIn(t, tabs...)
	if len(exec) != 50 {
		t.Fatalf("executions: %d, want 50", len(exec))
	}
	for i := 1; i < len(exec); i++ {
		if exec[i] == exec[i-1] {
			t.Fatalf("%s ran twice", exec[i])
		}
	}
	// Both tabs won some rounds, or the race was not a race.
	t.Logf("rounds won: tab 1 %d, tab 2 %d", tally(codes[0])["ok"], tally(codes[1])["ok"])
}

// IndexedDB missing, refusing to open, or over quota: every request is
// refused with the code of the store that failed and nothing runs.
func TestSharedIndexedDBFailsClosed(t *testing.T) {
	for _, fail := range []string{"absent", "open", "quota"} {
		for _, tc := range []struct{ q, code string }{
			{"max=5", "RATE_LIMIT_UNAVAILABLE"},
			{"max=0", "REPLAY_GUARD_UNAVAILABLE"},
		} {
			t.Run(fail+" "+tc.code, func(t *testing.T) {
				p := sharedPage(t, nil, siteURL, tc.q+"&fail="+fail+"&app="+uniqueApp("fail"))
				got := tally(evalPage[[]string](t, p, `window.__shared.burst(["f-1", "f-2", "f-3"])`))
				if got[tc.code] != 3 {
					t.Fatalf("answers: %v, want 3 %s", got, tc.code)
				}
				if n := len(executedIn(t, p)); n != 0 {
					t.Fatalf("the executor ran %d times", n)
				}
			})
		}
	}
}

// A later script of the origin reads the whole shared database: it finds
// app names, hashes and times, never a session id or a request id. The
// claim of (ses_shared, r-1) is stored under the hash testdata/claimkeys
// names, as redisstate names it in Redis.
func TestSharedIndexedDBShowsNoIDs(t *testing.T) {
	app := uniqueApp("hashed")
	p := sharedPage(t, nil, siteURL, "max=100&app="+app)
	ids := []string{"r-1", "private-call-7f3a9c"}
	if got := tally(evalPage[[]string](t, p, `window.__shared.burst(`+js(ids)+`)`)); got["ok"] != 2 {
		t.Fatalf("answers: %v", got)
	}
	dump := evalPage[map[string][]struct {
		Key []string `json:"key"`
	}](t, p, `window.__shared.dump()`)
	text := fmt.Sprint(evalPage[any](t, p, `window.__shared.dump()`))
	for _, secret := range append(ids, "ses_shared") {
		if strings.Contains(text, secret) {
			t.Errorf("the database shows %q", secret)
		}
	}
	raw, err := os.ReadFile("../testdata/claimkeys/keys.json")
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct{ Name, SessionID, RequestID, SHA256 string }
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{} // store -> the key's hash it must hold
	for _, v := range vectors {
		switch {
		case v.SessionID == "ses_shared" && v.RequestID == "r-1":
			want["claims"] = v.SHA256
		case v.SessionID == "ses_shared" && v.RequestID == "":
			want["windows"] = v.SHA256
		}
	}
	for store, hash := range want {
		found := false
		for _, rec := range dump[store] {
			found = found || len(rec.Key) == 2 && rec.Key[0] == app && rec.Key[1] == hash
		}
		if !found {
			t.Errorf("%s holds no [%q, %q]: %v", store, app, hash, dump[store])
		}
	}
}

// A later script upgrades the shared database to a version of its own:
// keeping the schema, deleting the stores, keying claims another way,
// dropping an index. The surface never refuses for good: the call that
// finds a schema not its own fails closed and has the database recreated,
// the next one runs, claims made since hold across a reload, and a reload
// with the database broken again recovers the same way.
func TestSharedIndexedDBSchemaBrokenByAScript(t *testing.T) {
	for _, tc := range []struct {
		kind   string
		broken bool
	}{{"version", false}, {"deleted", true}, {"keypath", true}, {"index", true}} {
		t.Run(tc.kind, func(t *testing.T) {
			p := sharedPage(t, nil, siteURL, "max=100&app="+uniqueApp("schema-"+tc.kind))
			reload := func() {
				t.Helper()
				if err := chromedp.Do(p.ctx, chromedp.Reload()); err != nil {
					t.Fatal(err)
				}
				waitPage(t, p, "window.__sharedReady === true && window.__shared.executed.length === 0")
			}
			call := func(id string) string {
				t.Helper()
				return evalPage[[]string](t, p, `window.__shared.burst([`+js(id)+`])`)[0]
			}
			if got := call("before"); got != "ok" {
				t.Fatalf("before: %s", got)
			}
			for round, when := range []string{"in the page", "after a reload"} {
				evalPage[float64](t, p, `window.__shared.breakSchema(`+js(tc.kind)+`)`)
				if round == 1 {
					reload()
				}
				first := call("first " + when)
				switch {
				case tc.broken && first != "RATE_LIMIT_UNAVAILABLE":
					t.Fatalf("%s: the call that finds the schema broken: %s, want RATE_LIMIT_UNAVAILABLE", when, first)
				case !tc.broken && first != "ok":
					t.Fatalf("%s: a schema that is still the surface's: %s, want ok", when, first)
				}
				if got := call("next " + when); got != "ok" {
					t.Fatalf("%s: the next call: %s, want ok", when, got)
				}
				if got := call("next " + when); got != "REPLAY_DETECTED" {
					t.Fatalf("%s: the next id again: %s, want REPLAY_DETECTED", when, got)
				}
			}
			reload()
			if got := call("next after a reload"); got != "REPLAY_DETECTED" {
				t.Fatalf("a claim made after the repair, after a reload: %s, want REPLAY_DETECTED", got)
			}
			if got := call("last"); got != "ok" {
				t.Fatalf("last: %s", got)
			}
		})
	}
}

// After the surface loaded, a script plants an accessor on every
// configurable property of IndexedDB's constructors and prototypes, of the
// global object, and of Array.prototype, and on Object.prototype for the
// names the shared state reads: opening the database, deciding, finding
// the schema broken and recreating it reach none of them from the runtime.
func TestSharedIndexedDBLooksNothingUp(t *testing.T) {
	p := sharedPage(t, nil, siteURL, "max=100&app="+uniqueApp("tripwire"))
	got := evalPage[struct {
		Codes []string
		Hits  []string
	}](t, p, `(async () => {
		const tw = window.__shared.tripwires();
		const codes = [];
		try {
			codes.push(...await window.__shared.burst(["a", "b", "a"]));
			await window.__shared.breakSchema("deleted");
			for (const id of ["c", "d", "d"]) codes.push(...await window.__shared.burst([id]));
		} finally {
			tw.remove();
		}
		return { codes, hits: tw.hits() };
	})()`)
	want := []string{"ok", "ok", "REPLAY_DETECTED", "RATE_LIMIT_UNAVAILABLE", "ok", "REPLAY_DETECTED"}
	if fmt.Sprint(got.Codes) != fmt.Sprint(want) {
		t.Errorf("answers %v, want %v", got.Codes, want)
	}
	if len(got.Hits) != 0 {
		t.Errorf("the runtime reached %d planted accessors: %v", len(got.Hits), got.Hits)
	}
}

// Expired claims and windows are swept by later decisions: the store
// shrinks back to what is inside a window.
func TestSharedIndexedDBSweeps(t *testing.T) {
	p := sharedPage(t, nil, siteURL, "max=1000&window=200&app="+uniqueApp("sweep"))
	ids := make([]string, 30)
	for i := range ids {
		ids[i] = fmt.Sprintf("s-%d", i)
	}
	if got := tally(evalPage[[]string](t, p, `window.__shared.burst(`+js(ids)+`)`)); got["ok"] != 30 {
		t.Fatalf("answers: %v", got)
	}
	type count struct{ Total, Expired int }
	p.sleep(t, 300*time.Millisecond) // the window passes
	// Decisions of the burst already swept what expired while it ran;
	// what remains must have expired by now, or the test proves nothing.
	first := evalPage[float64](t, p, `Date.now()`)
	for _, store := range []string{"claims", "windows"} {
		if c := evalPage[count](t, p, fmt.Sprintf(`window.__shared.mine(%q, %f)`, store, first)); c.Expired == 0 || c.Expired != c.Total {
			t.Fatalf("%s after the window: %+v, want some, all expired", store, c)
		}
	}
	for i := 0; i < 5; i++ { // 5 decisions of each kind sweep up to 40 entries
		if got := evalPage[[]string](t, p, fmt.Sprintf(`window.__shared.burst(["later-%d"])`, i)); got[0] != "ok" {
			t.Fatalf("later invoke: %v", got)
		}
	}
	// Every entry that had expired before these decisions is gone (the
	// later ones may have expired and gone too, on a slow machine).
	for _, store := range []string{"claims", "windows"} {
		if c := evalPage[count](t, p, fmt.Sprintf(`window.__shared.mine(%q, %f)`, store, first)); c.Expired != 0 || c.Total > 5 {
			t.Fatalf("%s after 5 more invokes: %+v, want none expired before them and at most their 5", store, c)
		}
	}
}

// The page's backend on Redis decides for the page (httpLimiter,
// httpGuard over redisstate.Handler): two browser contexts, each with its
// own cookie jar, logged in as one session, share one budget and one set
// of claims.
func TestSharedHTTPBackendOnRedis(t *testing.T) {
	srv := redistest.Start(t)
	rc := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { rc.Close() })
	app := uniqueApp("backend")
	opts := redisstate.Options{App: app}
	limiter, err := redisstate.NewLimiter(rc, 8, time.Minute, opts)
	if err != nil {
		t.Fatal(err)
	}
	guard, err := redisstate.NewGuard(rc, opts)
	if err != nil {
		t.Fatal(err)
	}
	state, err := redisstate.Handler(redisstate.HandlerOptions{
		Limiter: limiter, Guard: guard,
		Session: func(r *http.Request) (string, bool) {
			c, err := r.Cookie("sid")
			if err != nil || c.Value != "user-1-token" {
				return "", false
			}
			return "ses-user-1", true
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", devserver.Handler(siteDir))
	mux.Handle("/e2e/", http.StripPrefix("/e2e", devserver.Handler("testdata")))
	mux.Handle("/pling/state", state)
	mux.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: "user-1-token", Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/e2e/shared.html?store=http", http.StatusFound)
	})
	backend := httptest.NewServer(mux)
	t.Cleanup(backend.Close)

	var tabs []*tab
	for i := 0; i < 2; i++ {
		bctx, cancel := chromedp.NewContext(browser, chromedp.WithNewBrowserContext())
		t.Cleanup(cancel)
		p := sharedPage(t, bctx, backend.URL, "store=http")
		// Log in inside this browser context: its own cookie jar.
		if err := chromedp.Do(p.ctx, chromedp.Navigate(backend.URL+"/login")); err != nil {
			t.Fatal(err)
		}
		waitPage(t, p, "window.__sharedReady === true")
		tabs = append(tabs, p)
	}
	codes := burstAll(t, tabs, func(i int) []string {
		ids := make([]string, 10)
		for j := range ids {
			ids[j] = fmt.Sprintf("c%d-%d", i, j)
		}
		return ids
	})
	if got := tally(codes...); got["ok"] != 8 || got["RATE_LIMITED"] != 12 {
		t.Fatalf("answers by code over two browser contexts: %v, want 8 ok and 12 RATE_LIMITED", got)
	}
	if n := len(executedIn(t, tabs...)); n != 8 {
		t.Fatalf("executions: %d, want 8", n)
	}
	// Claims are shared too: an id one context ran is a replay in the
	// other. The budget is spent, so give it a fresh session's worth (its
	// rate and the claims the handler pays from it).
	prefix := "pling:rl:" + fmt.Sprint(len(app)) + ":" + app + ":"
	if err := rc.Del(context.Background(), prefix+"ses-user-1", prefix+"\x00claim:ses-user-1").Err(); err != nil {
		t.Fatal(err)
	}
	first := executedIn(t, tabs[0])
	if len(first) == 0 {
		first = executedIn(t, tabs[1])
	}
	for _, p := range tabs {
		if got := evalPage[[]string](t, p, `window.__shared.burst([`+js(first[0])+`])`); got[0] != "REPLAY_DETECTED" {
			t.Fatalf("an id already run, sent again: %v", got)
		}
	}
	// Redis stopped: the backend answers 503 and the page refuses closed.
	srv.Stop()
	before := len(executedIn(t, tabs...))
	if got := tally(evalPage[[]string](t, tabs[0], `window.__shared.burst(["down-1", "down-2"])`)); got["RATE_LIMIT_UNAVAILABLE"] != 2 {
		t.Fatalf("with Redis down: %v", got)
	}
	if n := len(executedIn(t, tabs...)); n != before {
		t.Fatalf("the executor ran with Redis down")
	}
	// Without the login cookie the backend refuses, and so does the page.
	anon := sharedPage(t, nil, backend.URL, "store=http")
	if got := tally(evalPage[[]string](t, anon, `window.__shared.burst(["anon-1"])`)); got["RATE_LIMIT_UNAVAILABLE"] != 1 {
		t.Fatalf("without a session: %v", got)
	}
}

// TestLaterScriptBaseCannotMoveTheGuard: the page's replay guard asks its
// backend at the relative "/pling/state". A script that runs after the
// surface loaded inserts <base href> naming a server of its own, which
// answers every claim "claimed" (with CORS, so the page can read it): if
// the guard resolved its address at each request, a request sent twice
// would run twice. The address is resolved when the guard is made.
func TestLaterScriptBaseCannotMoveTheGuard(t *testing.T) {
	var evilHits atomic.Int32
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Access-Control-Allow-Origin", r.Header.Get("Origin"))
		w.Header().Set("Access-Control-Allow-Headers", "content-type")
		w.Header().Set("Access-Control-Allow-Methods", "POST")
		if r.Method == http.MethodOptions {
			return
		}
		evilHits.Add(1)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"claim":"claimed"}`)
	}))
	t.Cleanup(evil.Close)

	// The page's own backend: an id is claimed once.
	var mu sync.Mutex
	claimed := map[string]bool{}
	mux := http.NewServeMux()
	mux.Handle("/", devserver.Handler(siteDir))
	mux.Handle("/e2e/", http.StripPrefix("/e2e", devserver.Handler("testdata")))
	mux.HandleFunc("/pling/state", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Op        string `json:"op"`
			RequestID string `json:"requestId"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&body) != nil || body.Op != "claim" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		mu.Lock()
		answer := "claimed"
		if claimed[body.RequestID] {
			answer = "replayed"
		}
		claimed[body.RequestID] = true
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"claim":%q}`, answer)
	})
	backend := httptest.NewServer(mux)
	t.Cleanup(backend.Close)

	p := sharedPage(t, nil, backend.URL, "store=http&max=0")
	evalPage[bool](t, p, `(() => {
		const base = document.createElement("base");
		base.href = `+js(evil.URL+"/")+`;
		document.head.prepend(base);
		return document.baseURI.startsWith(`+js(evil.URL)+`);
	})()`)
	first := evalPage[[]string](t, p, `window.__shared.burst(["base-1"])`)
	second := evalPage[[]string](t, p, `window.__shared.burst(["base-1"])`)
	if first[0] != "ok" || second[0] != "REPLAY_DETECTED" {
		t.Errorf("one id sent twice: %v then %v, want ok then REPLAY_DETECTED", first, second)
	}
	if n := len(executedIn(t, p)); n != 1 {
		t.Errorf("the executor ran %d times for one id", n)
	}
	if n := evilHits.Load(); n != 0 {
		t.Errorf("the later script's server was asked %d times", n)
	}
}
