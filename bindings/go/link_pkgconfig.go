//go:build idmint_pkgconfig

package idmint

// With -tags idmint_pkgconfig the flags come from an installed idmint.pc.

// #cgo pkg-config: idmint
import "C"
