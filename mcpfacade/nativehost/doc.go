// Package nativehost connects pling-mcp to the person's own browser without
// a DevTools port. Two processes meet on a Unix socket:
//
//   - the native messaging host, which the browser starts for the Pling
//     extension (with the extension's origin as its first argument, checked
//     against ExtensionOrigin) and talks to over stdin and stdout in the
//     browser's framing; it listens on the socket and relays;
//   - each pling-mcp that an MCP client starts in browser mode, which dials
//     the socket (a Link) and sends the page requests of its facade.
//
// The socket lives in a directory only its user can open (mode 0700, owned
// by the user, checked on both sides before use), and each side checks the
// other's uid on the connection where the operating system tells it (Linux,
// macOS). Several Links share one host; the extension tells them apart.
//
// The extension decides everything about the page: which tab, whether the
// person let desktop agents use the site, whether agents are cut off. The
// host holds no policy: it relays, within bounds.
package nativehost
