# SPDX-License-Identifier: Apache-2.0
# `cpack` in the build folder: four Debian packages from what
# cmake/install.cmake installs, under /usr with the config in /etc
# (docs/install.md):
#   libidmint0      the runtime library (named for its soname, libidmint.so.0)
#   libidmint-dev   header, libidmint.so link, libidmint.a, idmint.pc, CMake package
#   idmint          the command-line tool
#   idmintd         the daemon: system user, state folder, systemd unit (not enabled)
#   libidmint-java  the Java binding: the jar and its JNI library (where the
#                   build found a JDK: cmake/java_binding.cmake)
# so that a program linking libidmint pulls in neither h2o nor inih.
# The Debian revision is IDMINT_DEB_REVISION (default 1); the environment
# variable of that name overrides it at cpack time (an upgrade test builds
# the same tree twice). Each package carries copyright and a changelog
# (cmake/deb_docs.cmake); tests/install/test_install.sh runs lintian.
set(IDMINT_DEB_MAINTAINER
  "idmint maintainers <maintainers@users.noreply.a-seed-2ca6a4f9.example>"
  CACHE STRING "the Maintainer of the .deb packages")
set(IDMINT_DEB_REVISION 1 CACHE STRING "the Debian revision of the .deb packages")

set(IDMINT_DEB_LIB libidmint${PROJECT_VERSION_MAJOR}) # the soname's number
set(idmint_deb_packages lib ${IDMINT_DEB_LIB} dev libidmint-dev cli idmint daemon idmintd)
set(idmint_deb_components lib dev cli daemon)
if(IDMINT_JAVA)
  list(APPEND idmint_deb_packages java libidmint-java)
  list(APPEND idmint_deb_components java)
endif()

# copyright and changelog.Debian.gz of each package: only in the packages
# (EXCLUDE_FROM_ALL), not in a plain `cmake --install`.
set(idmint_deb_common "set(idmint_deb_src \"${PROJECT_SOURCE_DIR}\")
set(idmint_deb_out \"${PROJECT_BINARY_DIR}/debian/doc\")
set(idmint_deb_upstream \"${PROJECT_VERSION}\")
set(idmint_deb_revision \"${IDMINT_DEB_REVISION}\")
set(idmint_deb_maintainer \"${IDMINT_DEB_MAINTAINER}\")")
set(rest ${idmint_deb_packages})
while(rest)
  list(POP_FRONT rest comp pkg)
  install(CODE "${idmint_deb_common}
set(idmint_deb_pkg ${pkg})
include(\"${PROJECT_SOURCE_DIR}/cmake/deb_docs.cmake\")" COMPONENT ${comp} EXCLUDE_FROM_ALL)
endwhile()

# Maintainer scripts under the names dpkg wants, one folder per package.
set(ctl ${PROJECT_BINARY_DIR}/debian/control)
foreach(s postinst prerm postrm conffiles)
  configure_file(${PROJECT_SOURCE_DIR}/dist/debian/idmintd.${s} ${ctl}/idmintd/${s} COPYONLY)
endforeach()
configure_file(${PROJECT_SOURCE_DIR}/dist/debian/libidmint.triggers ${ctl}/lib/triggers COPYONLY)
# Before 1.0 a new minor version may change the ABI under the same soname
# (cmake/install.cmake): a program built against 0.2.x needs a 0.2.x.
if(PROJECT_VERSION_MAJOR EQUAL 0)
  math(EXPR next_minor "${PROJECT_VERSION_MINOR} + 1")
  set(abi_end "0.${next_minor}~")
else()
  math(EXPR next_major "${PROJECT_VERSION_MAJOR} + 1")
  set(abi_end "${next_major}~")
endif()
file(WRITE ${ctl}/lib/shlibs "libidmint ${PROJECT_VERSION_MAJOR} ${IDMINT_DEB_LIB} \
(>= ${PROJECT_VERSION_MAJOR}.${PROJECT_VERSION_MINOR}.0), ${IDMINT_DEB_LIB} (<< ${abi_end})\n")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME idmint)
set(CPACK_PACKAGE_VENDOR "idmint maintainers")
set(CPACK_PACKAGE_CONTACT "${IDMINT_DEB_MAINTAINER}")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_COMPONENTS_ALL ${idmint_deb_components})
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_RELEASE ${IDMINT_DEB_REVISION})
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${IDMINT_DEB_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SOURCE idmint)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# dpkg-shlibdeps adds what each package's ELF files link (libc6, libsqlite3-0, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)

set(about
  "Unique 64-bit IDs minted inside the caller's process, never a duplicate\n"
  "through crashes, restarts, clock steps or lost replies: Snowflake-style IDs\n"
  "under worker-id leases, dense numbers from reserved ranges, and UUIDv7.\n")
string(JOIN "" about ${about})
# libpq and libcurl are dlopen()ed by the postgres://, etcd:// and http://
# stores on first use (src/store/dynlib.c), so dpkg-shlibdeps cannot see them
# and sqlite: needs neither. Recommends: apt installs them by default, so
# every authority works out of the box, and --no-install-recommends keeps a
# SQLite-only machine lean; a store whose library is missing fails to open,
# naming the package. idmint and idmintd hold libidmint.a, so the same holds.
set(dlopened "libcurl4, libpq5")

set(CPACK_DEBIAN_LIB_PACKAGE_NAME ${IDMINT_DEB_LIB})
set(CPACK_DEBIAN_LIB_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_LIB_PACKAGE_RECOMMENDS "${dlopened}")
# CPack's own shlibs and dependency scan would add postinst and postrm
# scripts that call ldconfig, which the trigger already does (lintian:
# maintscript-calls-ldconfig): the shlibs file is ours, and the project
# config file below runs dpkg-shlibdeps on the library itself.
set(CPACK_DEBIAN_LIB_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_LIB_PACKAGE_CONTROL_EXTRA ${ctl}/lib/triggers ${ctl}/lib/shlibs)
set(CPACK_DEBIAN_LIB_DESCRIPTION "distributed unique-ID generator (library)\n${about}\
This package holds the shared library libidmint.")

set(CPACK_DEBIAN_DEV_PACKAGE_NAME libidmint-dev)
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_SHLIBDEPS OFF) # only a link to the library and an archive
# Only to link libidmint.a (pkg-config --static, idmint::idmint_static).
set(CPACK_DEBIAN_DEV_PACKAGE_SUGGESTS "libsqlite3-dev, libjansson-dev, libssl-dev")
set(CPACK_DEBIAN_DEV_DESCRIPTION "distributed unique-ID generator (development files)\n${about}\
This package holds what building against libidmint needs: idmint.h, the\n\
libidmint.so link, the static libidmint.a, idmint.pc and the CMake package\n\
(find_package(idmint)).")

set(CPACK_DEBIAN_CLI_PACKAGE_NAME idmint)
set(CPACK_DEBIAN_CLI_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_CLI_PACKAGE_RECOMMENDS "${dlopened}")
set(CPACK_DEBIAN_CLI_DESCRIPTION "distributed unique-ID generator (command-line tool)\n${about}\
This package holds the idmint command: mint, decode, verify and trace IDs,\n\
and manage namespaces of an authority.")

set(CPACK_DEBIAN_DAEMON_PACKAGE_NAME idmintd)
set(CPACK_DEBIAN_DAEMON_PACKAGE_SECTION net)
set(CPACK_DEBIAN_DAEMON_PACKAGE_DEPENDS "adduser")
set(CPACK_DEBIAN_DAEMON_PACKAGE_RECOMMENDS "${dlopened}")
set(CPACK_DEBIAN_DAEMON_PACKAGE_CONTROL_EXTRA ${ctl}/idmintd/conffiles ${ctl}/idmintd/postinst
  ${ctl}/idmintd/prerm ${ctl}/idmintd/postrm)
set(CPACK_DEBIAN_DAEMON_DESCRIPTION "distributed unique-ID generator (HTTP daemon)\n${about}\
This package holds idmintd, which mints for callers in any language and\n\
serves the authority to remote generators. Its service runs as the system\n\
user idmint and is installed but not enabled: it starts once an operator\n\
has configured /etc/idmint/idmintd.conf and run systemctl enable --now.")

# The jar (share/java, as Debian's Java policy has it) and the JNI library
# (LIBDIR/jni, on the java.library.path of Debian's JVMs). No Java runtime
# in Depends: a library leaves the choice of JVM to the program. The JNI
# library links libidmint.so.0, which dpkg-shlibdeps cannot find before the
# library package is installed: the dependency is written at cpack time.
set(CPACK_DEBIAN_JAVA_PACKAGE_NAME libidmint-java)
set(CPACK_DEBIAN_JAVA_PACKAGE_SECTION java)
set(CPACK_DEBIAN_JAVA_PACKAGE_SHLIBDEPS OFF)
set(CPACK_DEBIAN_JAVA_DESCRIPTION "distributed unique-ID generator (Java binding)\n${about}\
This package holds the Java binding (org.idmint, idmint.jar) and its JNI\n\
library: Minter.open(authority, namespace) mints inside the JVM, with no\n\
network call.")

# Files that moved out of the one package idmint of 0.1.0.
foreach(comp LIB DEV DAEMON)
  set(CPACK_DEBIAN_${comp}_PACKAGE_BREAKS "idmint (<< 0.2.0~)")
  set(CPACK_DEBIAN_${comp}_PACKAGE_REPLACES "idmint (<< 0.2.0~)")
endforeach()

# At cpack time: the revision ($IDMINT_DEB_REVISION may differ from the
# configured one), the -dev package's exact dependency on its library, and
# the library's dependencies as dpkg-shlibdeps finds them.
set(CPACK_PROJECT_CONFIG_FILE ${PROJECT_BINARY_DIR}/debian/cpack_project.cmake)
file(GENERATE OUTPUT ${CPACK_PROJECT_CONFIG_FILE} CONTENT "# Written by cmake/package.cmake.
if(NOT \"\$ENV{IDMINT_DEB_REVISION}\" STREQUAL \"\")
  set(CPACK_DEBIAN_PACKAGE_RELEASE \"\$ENV{IDMINT_DEB_REVISION}\")
endif()
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
  \"${IDMINT_DEB_LIB} (= ${PROJECT_VERSION}-\${CPACK_DEBIAN_PACKAGE_RELEASE})\")
# dpkg-shlibdeps wants a debian/control beside it, as CPack's own call does.
file(MAKE_DIRECTORY \"${PROJECT_BINARY_DIR}/debian/shlibdeps/debian\")
file(WRITE \"${PROJECT_BINARY_DIR}/debian/shlibdeps/debian/control\" \"\")
execute_process(COMMAND dpkg-shlibdeps -O \"$<TARGET_FILE:idmint>\"
  WORKING_DIRECTORY \"${PROJECT_BINARY_DIR}/debian/shlibdeps\"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0 OR NOT out MATCHES \"^shlibs:Depends=(.+)\")
  message(FATAL_ERROR \"dpkg-shlibdeps $<TARGET_FILE:idmint>: \${rc} \${out} \${err}\")
endif()
set(CPACK_DEBIAN_LIB_PACKAGE_DEPENDS \"\${CMAKE_MATCH_1}\")
set(CPACK_DEBIAN_JAVA_PACKAGE_DEPENDS
  \"\${CMAKE_MATCH_1}, ${IDMINT_DEB_LIB} (= ${PROJECT_VERSION}-\${CPACK_DEBIAN_PACKAGE_RELEASE})\")
")

include(CPack)
