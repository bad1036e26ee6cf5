//go:build !(js || wasip1)

// Package headless holds the Chromium flags every headless browser of the
// tests, the benchmarks and the screenshots starts with, so that they
// measure and look at the same browser.
package headless

import "github.com/chromedp/chromedp"

// Options are the allocator options for Debian's chromium at path with
// the profile directory profile: headless, no network chatter on a closed
// network (without them Chromium floods it with refused connections), and
// no throttling of background tabs, since tabs of one browser run side by
// side. extra options (an extension, a feature, a DevTools port) come
// last, so they can override any of these.
func Options(chromium, profile string, extra ...chromedp.ExecAllocatorOption) []chromedp.ExecAllocatorOption {
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium),
		chromedp.UserDataDir(profile),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-background-timer-throttling", true),
		chromedp.Flag("disable-renderer-backgrounding", true),
		chromedp.Flag("disable-backgrounding-occluded-windows", true),
	}
	return append(opts, extra...)
}
