# tests/package/package_test.cmake — the steps of the package tests (tests/package/CMakeLists.txt),
# one per ctest test, run as `cmake -DSTEP=... -P package_test.cmake`:
#   install    cmake --install BUILD_DIR --prefix PREFIX (a fresh one), check the files a user
#              needs are there, and run the installed `diffphys` program away from the source
#              tree (it must read nothing from it: the replay page is compiled in)
#   cmake      configure consumer/ with -DCMAKE_PREFIX_PATH=PREFIX (and check that it found this
#              prefix, not another diffphys), build it, run it on bouncing_ball.json
#   pkgconfig  compile consumer/main.cpp with one g++ line, flags from
#              `pkg-config --static --cflags --libs diffphys` with PKG_CONFIG_PATH=PREFIX/lib/pkgconfig,
#              and run it
# Any failure ends the script with FATAL_ERROR, which fails the test.
cmake_minimum_required(VERSION 3.25)
set(scene ${SOURCE_DIR}/examples/scenes/bouncing_ball.json)

# Runs a command, echoing it; fails the test with its output if it exits non-zero.
function(run)
  list(JOIN ARGN " " shown)
  message(STATUS "$ ${shown}")
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result OUTPUT_VARIABLE out ERROR_VARIABLE out)
  message("${out}")
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "failed (${result}): ${shown}")
  endif()
endfunction()

if(STEP STREQUAL "install")
  file(REMOVE_RECURSE ${PREFIX})
  run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX})
  foreach(file bin/diffphys ${LIBDIR}/libdiffphys.a
          include/diffphys/scene.hpp include/diffphys/simulator.hpp include/diffphys/rollout.hpp
          include/diffphys/robot_loaders.hpp
          ${LIBDIR}/cmake/diffphys/diffphysConfig.cmake ${LIBDIR}/cmake/diffphys/diffphysConfigVersion.cmake
          ${LIBDIR}/cmake/diffphys/diffphysTargets.cmake ${LIBDIR}/cmake/diffphys/Finddiffphys_SuiteSparse.cmake
          ${LIBDIR}/pkgconfig/diffphys.pc)
    if(NOT EXISTS ${PREFIX}/${file})
      message(FATAL_ERROR "not installed: ${PREFIX}/${file}")
    endif()
  endforeach()
  # Every public header, and nothing of the build's own (Python module, node_modules).
  file(GLOB headers RELATIVE ${SOURCE_DIR}/include ${SOURCE_DIR}/include/diffphys/*.hpp)
  foreach(header IN LISTS headers)
    if(NOT EXISTS ${PREFIX}/include/${header})
      message(FATAL_ERROR "public header not installed: ${header}")
    endif()
  endforeach()
  file(GLOB_RECURSE unwanted LIST_DIRECTORIES true ${PREFIX}/*)
  list(FILTER unwanted INCLUDE REGEX "node_modules|\\.so$|\\.so\\.|\\.py$")
  if(unwanted)
    message(FATAL_ERROR "installed, but should not be: ${unwanted}")
  endif()
  # The installed program, run from elsewhere.
  set(run_dir ${WORK_DIR}/program)
  file(REMOVE_RECURSE ${run_dir})
  file(MAKE_DIRECTORY ${run_dir})
  set(view_args)
  if(VIEWER)
    set(view_args --view ${run_dir}/ball.html)
  endif()
  run(${CMAKE_COMMAND} -E chdir ${run_dir}
      ${PREFIX}/bin/diffphys simulate ${scene} --steps 100 --quiet --out ${run_dir}/ball.json ${view_args})
  if(NOT EXISTS ${run_dir}/ball.json OR (VIEWER AND NOT EXISTS ${run_dir}/ball.html))
    message(FATAL_ERROR "the installed diffphys program wrote no trajectory (or replay page) in ${run_dir}")
  endif()

elseif(STEP STREQUAL "cmake")
  set(consumer_build ${WORK_DIR}/consumer-cmake)
  file(REMOVE_RECURSE ${consumer_build})
  set(generator_args -G ${GENERATOR})
  if(MAKE_PROGRAM)
    list(APPEND generator_args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  # No build type and no -O: the consumer's own code is a few calls (the work is in the
  # installed, optimised library), and -O0 compiles fastest on CI's loaded 2 cores.
  run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/package/consumer -B ${consumer_build} ${generator_args}
      -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${PREFIX}
      -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF)
  # find_package must have taken this prefix's config, not one installed elsewhere.
  file(STRINGS ${consumer_build}/CMakeCache.txt found REGEX "^diffphys_DIR:")
  string(REGEX REPLACE "^[^=]*=" "" found "${found}")
  file(REAL_PATH "${found}" found)
  file(REAL_PATH ${PREFIX}/${LIBDIR}/cmake/diffphys expected)
  if(NOT found STREQUAL expected)
    message(FATAL_ERROR "find_package(diffphys) found '${found}', not the installed ${expected}")
  endif()
  run(${CMAKE_COMMAND} --build ${consumer_build})
  run(${consumer_build}/consumer ${scene})

elseif(STEP STREQUAL "pkgconfig")
  set(consumer_build ${WORK_DIR}/consumer-pkgconfig)
  file(REMOVE_RECURSE ${consumer_build})
  file(MAKE_DIRECTORY ${consumer_build})
  # What a user types, through the shell: the flags' word splitting is the shell's.
  set(line "${CXX} -std=c++20 ${SOURCE_DIR}/tests/package/consumer/main.cpp -o ${consumer_build}/consumer \
$(${PKG_CONFIG} --static --cflags --libs diffphys)")
  run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${PREFIX}/${LIBDIR}/pkgconfig
      ${PKG_CONFIG} --static --cflags --libs diffphys)
  # It must be this prefix's diffphys.pc, and its relocatable prefix must land on PREFIX.
  execute_process(COMMAND ${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${PREFIX}/${LIBDIR}/pkgconfig
                  ${PKG_CONFIG} --variable=includedir diffphys
                  OUTPUT_VARIABLE includedir OUTPUT_STRIP_TRAILING_WHITESPACE)
  file(REAL_PATH "${includedir}" includedir)
  file(REAL_PATH ${PREFIX}/include expected)
  if(NOT includedir STREQUAL expected)
    message(FATAL_ERROR "pkg-config's includedir for diffphys is '${includedir}', not ${expected}")
  endif()
  run(${CMAKE_COMMAND} -E env PKG_CONFIG_PATH=${PREFIX}/${LIBDIR}/pkgconfig sh -e -x -c "${line}")
  run(${consumer_build}/consumer ${scene})

else()
  message(FATAL_ERROR "package_test.cmake: unknown STEP '${STEP}' (install, cmake or pkgconfig)")
endif()
