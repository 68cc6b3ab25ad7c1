# One static library per src/ folder; the link graph enforces DESIGN.md's dependency direction
# (cli -> train -> {model, eval} -> {kernel, text} -> sparse).
set(SPARSERL_WARNINGS -Wall -Wextra -Werror)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 13)
  # GCC 13's -Wdangling-reference flags every function returning a reference that was passed a
  # temporary, which GoogleTest macros do all the time (false positives, fixed in GCC 14).
  list(APPEND SPARSERL_WARNINGS -Wno-dangling-reference)
endif()
if(SPARSERL_SANITIZE AND CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # GCC's flow analysis misreads ASan's instrumentation: -Wmaybe-uninitialized false positives in
  # libstdc++ (<regex>, std::function) that the plain build does not have.
  list(APPEND SPARSERL_WARNINGS -Wno-maybe-uninitialized)
endif()

function(sparserl_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(NOT srcs)  # a module with headers only so far
    add_library(sparserl_${name} INTERFACE)
    target_include_directories(sparserl_${name} INTERFACE ${PROJECT_SOURCE_DIR}/src)
    target_link_libraries(sparserl_${name} INTERFACE ${ARG_DEPS})
    return()
  endif()
  add_library(sparserl_${name} STATIC ${srcs})
  target_include_directories(sparserl_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_compile_options(sparserl_${name} PRIVATE ${SPARSERL_WARNINGS})
  target_link_libraries(sparserl_${name} PUBLIC ${ARG_DEPS})
endfunction()

# One GoogleTest executable per tests/<module>/test_*.cpp, so a test file builds on its own.
function(sparserl_tests module)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB tests CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/test_*.cpp)
  foreach(file ${tests})
    get_filename_component(stem ${file} NAME_WE)
    set(target ${module}_${stem})
    add_executable(${target} ${file})
    target_compile_options(${target} PRIVATE ${SPARSERL_WARNINGS})
    target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
    target_link_libraries(${target} PRIVATE ${ARG_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
    target_compile_definitions(${target} PRIVATE
      SPARSERL_SOURCE_DIR="${PROJECT_SOURCE_DIR}" SPARSERL_BINARY_DIR="${PROJECT_BINARY_DIR}")
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60 PROPERTIES TIMEOUT 600)
  endforeach()
endfunction()

# Builds `target` without the sanitizers of SPARSERL_SANITIZE / SPARSERL_FUZZ. For the CPU
# emulator child: the sanitizer runtimes need system calls after seccomp strict mode and cannot
# follow its fiber stack switches, and the sanitizer build should test the real sandbox.
function(sparserl_sanitizer_exempt target)
  if(SPARSERL_SANITIZE OR SPARSERL_FUZZ)
    target_compile_options(${target} PRIVATE -fno-sanitize=all)
    target_link_options(${target} PRIVATE -fno-sanitize=all)
  endif()
endfunction()
