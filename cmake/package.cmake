# SPDX-License-Identifier: Apache-2.0
# `cpack` in the build folder: idmint_VERSION-1_ARCH.deb, what
# cmake/install.cmake installs, under /usr with its config in /etc, and the
# maintainer scripts of dist/debian/ (docs/install.md).
set(IDMINT_DEB_MAINTAINER
  "idmint maintainers <maintainers@users.noreply.a-seed-2ca6a4f9.example>"
  CACHE STRING "the Maintainer of the .deb")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME idmint)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "distributed unique-ID generator: library, daemon and CLI")
set(CPACK_PACKAGE_DESCRIPTION
  "Unique 64-bit IDs minted inside the caller's process, never a duplicate through\n"
  "crashes, restarts, clock steps or lost replies: Snowflake-style IDs under\n"
  "worker-id leases, dense numbers from reserved ranges, and UUIDv7.\n"
  "This package holds libidmint (shared and static, with pkg-config and CMake\n"
  "files), the idmint command and the idmintd HTTP daemon, whose service is\n"
  "installed but not enabled.")
string(JOIN "" CPACK_PACKAGE_DESCRIPTION ${CPACK_PACKAGE_DESCRIPTION})

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${IDMINT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# dpkg-shlibdeps adds what the binaries link (libc6, libsqlite3-0, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "adduser")
# libpq and libcurl are dlopen()ed by the postgres://, etcd:// and http://
# stores on first use (src/store/dynlib.c), so dpkg-shlibdeps cannot see them
# and sqlite: needs neither. Recommends: apt installs them by default, so
# every authority works out of the box, and --no-install-recommends keeps a
# SQLite-only machine lean; a store whose library is missing fails to open,
# naming the package.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "libcurl4, libpq5")
# Only to link libidmint.a (pkg-config --static, idmint::idmint_static).
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "libsqlite3-dev, libjansson-dev")
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
  ${PROJECT_SOURCE_DIR}/dist/debian/conffiles
  ${PROJECT_SOURCE_DIR}/dist/debian/postinst
  ${PROJECT_SOURCE_DIR}/dist/debian/prerm
  ${PROJECT_SOURCE_DIR}/dist/debian/postrm
  ${PROJECT_SOURCE_DIR}/dist/debian/triggers)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)

include(CPack)
