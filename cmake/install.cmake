# SPDX-License-Identifier: Apache-2.0
# What `cmake --install` puts in place and what `cpack` packs as a .deb
# (docs/install.md). Included once from CMakeLists.txt, after every target.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(IDMINT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/idmint)
# Not CMAKE_INSTALL_LIBDIR: systemd reads <prefix>/lib/systemd/system only.
set(IDMINT_INSTALL_UNITDIR lib/systemd/system CACHE STRING
  "where the systemd unit goes, relative to the install prefix")

# idmint_static names the source tree's include folder and links the build's
# warning flags, neither of which an installed library may carry: the
# installed archive is the same objects under an interface of its own, whose
# link line is what the archive itself calls (the shared sqlite3 and jansson).
add_library(idmint_archive STATIC $<TARGET_OBJECTS:idmint_objects>)
set_target_properties(idmint_archive PROPERTIES OUTPUT_NAME idmint EXPORT_NAME idmint_static)
target_include_directories(idmint_archive INTERFACE
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_link_libraries(idmint_archive INTERFACE Threads::Threads ${SQLITE3_LIBRARIES}
  ${JANSSON_LIBRARIES} ${CMAKE_DL_LIBS})

install(TARGETS idmint idmint_archive EXPORT idmint-targets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS idmint_cli idmintd RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/idmint.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/idmint.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${PROJECT_SOURCE_DIR}/docs/man/idmintd.8 DESTINATION ${CMAKE_INSTALL_MANDIR}/man8)

# find_package(idmint): idmint::idmint (shared) and idmint::idmint_static.
install(EXPORT idmint-targets NAMESPACE idmint:: FILE idmintTargets.cmake
  DESTINATION ${IDMINT_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/idmintConfig.cmake.in
  ${PROJECT_BINARY_DIR}/install/idmintConfig.cmake INSTALL_DESTINATION ${IDMINT_CMAKE_DIR})
# 0.x: a new minor version may change the ABI (the soname is only the major).
write_basic_package_version_file(${PROJECT_BINARY_DIR}/install/idmintConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/install/idmintConfig.cmake
  ${PROJECT_BINARY_DIR}/install/idmintConfigVersion.cmake DESTINATION ${IDMINT_CMAKE_DIR})

# The pkg-config file, the unit and the example configuration name absolute
# paths of the prefix, which `cmake --install --prefix` and cpack only give
# at install time: cmake/install_paths.cmake writes them then.
list(JOIN SQLITE3_STATIC_LIBRARIES " -l" sqlite_libs)
list(JOIN JANSSON_STATIC_LIBRARIES " -l" jansson_libs)
set(IDMINT_PC_LIBS_PRIVATE "-l${sqlite_libs} -l${jansson_libs}")
foreach(lib ${CMAKE_DL_LIBS})
  string(APPEND IDMINT_PC_LIBS_PRIVATE " -l${lib}")
endforeach()
if(CMAKE_THREAD_LIBS_INIT)
  string(APPEND IDMINT_PC_LIBS_PRIVATE " ${CMAKE_THREAD_LIBS_INIT}")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/install_paths.cmake.in
  ${PROJECT_BINARY_DIR}/install/install_paths.cmake @ONLY)
install(SCRIPT ${PROJECT_BINARY_DIR}/install/install_paths.cmake)

include(${PROJECT_SOURCE_DIR}/cmake/package.cmake)
