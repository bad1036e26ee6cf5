package mcpfacade

import (
	"fmt"

	"pling.dev/agent/client"
)

// ErrNotSent is matched by a transport error that says the request never
// reached the page (the person has not opted the site in, no tab of it is
// given to the extension, agents are cut off, the browser is not
// connected): nothing ran there, so a call gets PAGE_UNREACHABLE rather than
// an unknown outcome. It matches client.ErrClosed: the page offers nothing.
var ErrNotSent = fmt.Errorf("mcpfacade: nothing was sent to the page: %w", client.ErrClosed)
