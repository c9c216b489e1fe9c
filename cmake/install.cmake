# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` puts in place and what `cpack` packs as a .deb
# (docs/install.md). Included once from CMakeLists.txt, after every target.
# Every rule names the Debian package it goes to (cmake/package.cmake):
# lib (the runtime library), dev, cli, daemon and java.

# On Debian the library goes to the multiarch folder (lib/x86_64-linux-gnu),
# as Debian's own packages have it, whatever the prefix: GNUInstallDirs only
# picks it for a /usr prefix, and a package whose .pc is in /usr/lib/pkgconfig
# cannot be cross-compiled against. A build configured before this rule kept
# GNUInstallDirs' "lib"; it moves once (IDMINT_LIBDIR_CHOSEN), and a
# -DCMAKE_INSTALL_LIBDIR given afterwards is kept.
if(CMAKE_LIBRARY_ARCHITECTURE AND EXISTS /etc/debian_version AND
   (NOT DEFINED CMAKE_INSTALL_LIBDIR OR
    (CMAKE_INSTALL_LIBDIR STREQUAL "lib" AND NOT IDMINT_LIBDIR_CHOSEN)))
  set(CMAKE_INSTALL_LIBDIR lib/${CMAKE_LIBRARY_ARCHITECTURE} CACHE PATH
    "Object code libraries (lib/${CMAKE_LIBRARY_ARCHITECTURE})" FORCE)
endif()
set(IDMINT_LIBDIR_CHOSEN ON CACHE INTERNAL "CMAKE_INSTALL_LIBDIR was given its Debian default once")
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(IDMINT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/idmint)
# Not CMAKE_INSTALL_LIBDIR: systemd reads <prefix>/lib/systemd/system only.
set(IDMINT_INSTALL_UNITDIR lib/systemd/system CACHE STRING
  "where the systemd unit goes, relative to the install prefix")

# idmint_static names the source tree's include folder and links the build's
# warning flags, neither of which an installed library may carry: the
# installed archive is the same objects under an interface of its own, whose
# link line is what the archive itself calls (the shared sqlite3, jansson and
# libcrypto).
add_library(idmint_archive STATIC $<TARGET_OBJECTS:idmint_objects>)
set_target_properties(idmint_archive PROPERTIES OUTPUT_NAME idmint EXPORT_NAME idmint_static)
target_include_directories(idmint_archive INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(idmint_archive INTERFACE Threads::Threads ${SQLITE3_LIBRARIES}
  ${JANSSON_LIBRARIES} ${LIBCRYPTO_LIBRARIES} ${CMAKE_DL_LIBS})

# The runtime package holds libidmint.so.0 and its real file; the -dev
# package the unversioned link a linker looks for.
install(TARGETS idmint EXPORT idmint-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT lib NAMELINK_COMPONENT dev)
install(TARGETS idmint_archive EXPORT idmint-targets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT dev)
install(TARGETS idmint_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)
install(TARGETS idmintd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT daemon)
install(FILES ${PROJECT_SOURCE_DIR}/include/idmint.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  COMPONENT dev)

# Man pages gzip -9n'd (no name, no time: the same bytes every build), as
# Debian wants them and man reads them anywhere.
set(idmint_man_gz)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/man)
foreach(page idmint.1 idmintd.8)
  set(out ${PROJECT_BINARY_DIR}/man/${page}.gz)
  add_custom_command(OUTPUT ${out}
    COMMAND sh -c "gzip -9nc \"$0\" >\"$1\"" ${PROJECT_SOURCE_DIR}/docs/man/${page} ${out}
    DEPENDS ${PROJECT_SOURCE_DIR}/docs/man/${page} VERBATIM)
  list(APPEND idmint_man_gz ${out})
endforeach()
add_custom_target(idmint_man ALL DEPENDS ${idmint_man_gz})
install(FILES ${PROJECT_BINARY_DIR}/man/idmint.1.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1
  COMPONENT cli)
install(FILES ${PROJECT_BINARY_DIR}/man/idmintd.8.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man8
  COMPONENT daemon)

# find_package(idmint): idmint::idmint (shared) and idmint::idmint_static.
install(EXPORT idmint-targets NAMESPACE idmint:: FILE idmintTargets.cmake
  DESTINATION ${IDMINT_CMAKE_DIR} COMPONENT dev)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/idmintConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install/idmintConfig.cmake INSTALL_DESTINATION ${IDMINT_CMAKE_DIR})
# 0.x: a new minor version may change the ABI (the soname is only the major).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/idmintConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/idmintConfig.cmake
  ${PROJECT_BINARY_DIR}/install/idmintConfigVersion.cmake DESTINATION ${IDMINT_CMAKE_DIR}
  COMPONENT dev)

# The pkg-config file, the unit and the example configuration name absolute
# paths of the prefix, which `cmake --install --prefix` and cpack only give
# at install time: cmake/install_paths.cmake writes them then.
list(JOIN SQLITE3_STATIC_LIBRARIES " -l" sqlite_libs)
list(JOIN JANSSON_STATIC_LIBRARIES " -l" jansson_libs)
list(JOIN LIBCRYPTO_STATIC_LIBRARIES " -l" crypto_libs)
set(IDMINT_PC_LIBS_PRIVATE "-l${sqlite_libs} -l${jansson_libs} -l${crypto_libs}")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND IDMINT_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND IDMINT_PC_LIBS_PRIVATE " ${CMAKE_THREAD_LIBS_INIT}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/install_paths.cmake.in
  ${PROJECT_BINARY_DIR}/install/install_paths.cmake @ONLY)
# One script, two parts: the .pc goes with -dev, the unit and config with idmintd.
install(CODE "set(idmint_part dev)" COMPONENT dev)
install(SCRIPT ${PROJECT_BINARY_DIR}/install/install_paths.cmake COMPONENT dev)
install(CODE "set(idmint_part daemon)" COMPONENT daemon)
install(SCRIPT ${PROJECT_BINARY_DIR}/install/install_paths.cmake COMPONENT daemon)

# The Java binding (cmake/java_binding.cmake): the jar where Debian's Java
# policy puts jars, as idmint-VERSION.jar and the idmint.jar link, and the
# JNI library where Debian's JVMs look (their java.library.path).
if(IDMINT_JAVA)
  install_jar(idmint_java DESTINATION ${CMAKE_INSTALL_DATADIR}/java COMPONENT java)
  install(TARGETS idmint_jni LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/jni COMPONENT java)
endif()

include(${PROJECT_SOURCE_DIR}/cmake/package.cmake)
