# SPDX-License-Identifier: Apache-2.0
# Run at install time for one Debian package (cmake/package.cmake): puts
# /usr/share/doc/PKG/copyright and changelog.Debian.gz (gzip -9n) in place.
# Set before it: idmint_deb_pkg, idmint_deb_src (the source tree),
# idmint_deb_out (a scratch folder), idmint_deb_upstream, idmint_deb_revision
# (the default, which $IDMINT_DEB_REVISION overrides) and idmint_deb_maintainer.
set(IDMINT_DEB_REVISION "${idmint_deb_revision}")
if(NOT "$ENV{IDMINT_DEB_REVISION}" STREQUAL "")
  set(IDMINT_DEB_REVISION "$ENV{IDMINT_DEB_REVISION}")
endif()
set(PROJECT_VERSION "${idmint_deb_upstream}")
set(IDMINT_DEB_VERSION "${idmint_deb_upstream}-${IDMINT_DEB_REVISION}")
set(IDMINT_DEB_MAINTAINER "${idmint_deb_maintainer}")
# RFC 5322 date; SOURCE_DATE_EPOCH, when set, makes it reproducible.
string(TIMESTAMP IDMINT_DEB_DATE "%a, %d %b %Y %H:%M:%S +0000" UTC)

set(dir "${idmint_deb_out}/${idmint_deb_pkg}")
file(MAKE_DIRECTORY "${dir}")
configure_file("${idmint_deb_src}/dist/debian/changelog.in" "${dir}/changelog.Debian" @ONLY)
execute_process(COMMAND gzip -9nf "${dir}/changelog.Debian" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "gzip -9n ${dir}/changelog.Debian failed: ${rc}")
endif()
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/share/doc/${idmint_deb_pkg}" TYPE FILE
  PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ
  FILES "${idmint_deb_src}/dist/debian/copyright" "${dir}/changelog.Debian.gz")
