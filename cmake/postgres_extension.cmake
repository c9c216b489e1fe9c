# SPDX-License-Identifier: Apache-2.0
# The PostgreSQL extension (bindings/postgres), built by its own PGXS
# Makefile against this build's libidmint, wherever pg_config names the
# server's headers (Debian: postgresql-server-dev-15). Not in sanitizer
# builds: the server loads it, and the server is not built with sanitizers.
# Installed only on request, into the server's own folders:
#   cmake --install BUILD --component postgresql
# (not part of the .deb packages, whose components cmake/package.cmake lists).
find_program(IDMINT_PG_CONFIG pg_config)
set(IDMINT_PG_EXTENSION OFF)
if(IDMINT_PG_CONFIG AND NOT IDMINT_SANITIZE)
  foreach(what includedir-server pkglibdir sharedir)
    execute_process(COMMAND ${IDMINT_PG_CONFIG} --${what}
      OUTPUT_VARIABLE pg_${what} OUTPUT_STRIP_TRAILING_WHITESPACE)
  endforeach()
  if(EXISTS "${pg_includedir-server}/postgres.h")
    set(IDMINT_PG_EXTENSION ON)
  endif()
endif()
if(NOT IDMINT_PG_EXTENSION)
  message(STATUS "PostgreSQL extension: not built (no pg_config with server headers)")
  return()
endif()

set(pg_src ${PROJECT_SOURCE_DIR}/bindings/postgres)
set(pg_out ${CMAKE_BINARY_DIR}/postgres)
file(GLOB pg_sources CONFIGURE_DEPENDS ${pg_src}/src/*.c ${pg_src}/src/*.h)
# The module finds libidmint beside itself (a test copies both into one
# folder) or where the library is installed. PGXS tracks no header
# dependencies: the objects are rebuilt from clean whenever anything changes.
add_custom_command(OUTPUT ${pg_out}/idmint.so
  COMMAND ${CMAKE_COMMAND} -E rm -rf ${pg_out}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${pg_out}/src
  COMMAND make -s -C ${pg_out} -f ${pg_src}/Makefile VPATH=${pg_src}
    PG_CONFIG=${IDMINT_PG_CONFIG}
    IDMINT_CPPFLAGS=-I${PROJECT_SOURCE_DIR}/include
    "IDMINT_LIBS=-L$<TARGET_FILE_DIR:idmint> -lidmint"
    "IDMINT_RPATH=$$ORIGIN:${CMAKE_INSTALL_FULL_LIBDIR}"
  DEPENDS idmint ${pg_sources} ${pg_src}/Makefile
  COMMENT "Building the PostgreSQL extension with PGXS"
  VERBATIM)
add_custom_target(idmint_postgres ALL DEPENDS ${pg_out}/idmint.so)

install(FILES ${pg_out}/idmint.so DESTINATION ${pg_pkglibdir}
  COMPONENT postgresql EXCLUDE_FROM_ALL)
install(FILES ${pg_src}/idmint.control ${pg_src}/idmint--0.2.0.sql
  DESTINATION ${pg_sharedir}/extension COMPONENT postgresql EXCLUDE_FROM_ALL)
