# SPDX-License-Identifier: Apache-2.0
# The Java binding (bindings/java): the jar (org.idmint) and its JNI library
# libidmint_jni.so, wherever a JDK of version 17 or later with jni.h is
# found (Debian: default-jdk-headless). Not in sanitizer builds: a JVM
# loads the JNI library, and the JVM is not built with sanitizers. Nothing
# is fetched from a Maven repository: javac builds the jar from the sources.
# Installed with the rest (cmake/install.cmake) and packed as libidmint-java.
set(IDMINT_JAVA OFF)
if(NOT IDMINT_SANITIZE)
  find_package(Java 17 COMPONENTS Development QUIET)
  find_package(JNI QUIET)
  if(Java_Development_FOUND AND JNI_INCLUDE_DIRS)
    set(IDMINT_JAVA ON)
  endif()
endif()
if(NOT IDMINT_JAVA)
  message(STATUS "Java binding: not built (no JDK 17 or later with jni.h)")
  return()
endif()
include(UseJava)

set(java_src ${PROJECT_SOURCE_DIR}/bindings/java/src/main)
file(GLOB java_sources CONFIGURE_DEPENDS ${java_src}/java/org/idmint/*.java)
file(GLOB jni_sources CONFIGURE_DEPENDS ${java_src}/c/*.c)

set(CMAKE_JAVA_COMPILE_FLAGS -encoding UTF-8 -Xlint:all -Werror --release 17)
# javac -h writes org_idmint_Native.h: the C side is compiled against the
# Java side's own declarations, so a signature that drifts fails the build.
add_jar(idmint_java SOURCES ${java_sources} OUTPUT_NAME idmint VERSION ${PROJECT_VERSION}
  OUTPUT_DIR ${CMAKE_BINARY_DIR}/java
  GENERATE_NATIVE_HEADERS idmint_jni_headers DESTINATION ${CMAKE_BINARY_DIR}/java/include)

add_library(idmint_jni SHARED ${jni_sources})
target_include_directories(idmint_jni PRIVATE ${JNI_INCLUDE_DIRS})
target_link_libraries(idmint_jni PRIVATE idmint idmint_flags idmint_jni_headers)
set_target_properties(idmint_jni PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/java)
add_dependencies(idmint_jni idmint_java)
