//go:build !idmint_pkgconfig

package idmint

// Plain -lidmint, so CGO_CFLAGS/CGO_LDFLAGS alone can point the build at a
// source tree or an uninstalled build: "#cgo pkg-config" would fail without
// an idmint.pc even when those variables say where everything is.

// #cgo LDFLAGS: -lidmint
import "C"
