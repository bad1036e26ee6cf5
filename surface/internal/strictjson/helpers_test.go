package strictjson

import "unicode"

func toUpper(r rune) rune { return unicode.ToUpper(r) }
func toLower(r rune) rune { return unicode.ToLower(r) }
func toTitle(r rune) rune { return unicode.ToTitle(r) }
