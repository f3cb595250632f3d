# cmake/install.cmake — what `cmake --install build --prefix P` puts under P, included by the
# top-level CMakeLists.txt after every target exists:
#   lib/libdiffphys.a                      the library (static; its private dependencies are
#                                          the system's tinyxml2, Qhull, tinyobjloader and
#                                          SuiteSparse, found again by the files below)
#   include/diffphys/*.hpp                 the public headers (include/diffphys/, self-contained:
#                                          they include only each other and the standard library)
#   bin/diffphys                           the command-line program (it reads no installed file:
#                                          the viewer's replay page is compiled into it, viewer/)
#   lib/cmake/diffphys/                    find_package(diffphys): config, version, exported
#                                          target diffphys::diffphys, Finddiffphys_SuiteSparse.cmake
#   lib/pkgconfig/diffphys.pc              pkg-config --static --cflags --libs diffphys
# Not installed: the Python module (python/, built for the build tree's PYTHONPATH), the viewer's
# node_modules (build-time only), tests, benchmarks. tests/package/ checks the result by building
# a small program against it, with CMake and with pkg-config.
include(CMakePackageConfigHelpers)

set(DIFFPHYS_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/diffphys)

install(TARGETS diffphys EXPORT diffphysTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/diffphys DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.hpp")
install(TARGETS diffphys_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# find_package(diffphys): the exported target, the config that finds its link dependencies
# first, and a version file. 0.x: a minor version may break the API, hence SameMinorVersion.
install(EXPORT diffphysTargets NAMESPACE diffphys:: DESTINATION ${DIFFPHYS_INSTALL_CMAKEDIR}
  FILE diffphysTargets.cmake)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/diffphysConfig.cmake.in
  ${PROJECT_BINARY_DIR}/package/diffphysConfig.cmake
  INSTALL_DESTINATION ${DIFFPHYS_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/diffphysConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/diffphysConfig.cmake
              ${PROJECT_BINARY_DIR}/package/diffphysConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/Finddiffphys_SuiteSparse.cmake
  DESTINATION ${DIFFPHYS_INSTALL_CMAKEDIR})

# pkg-config. The prefix is found from the .pc file's own location (${pcfiledir}), because
# `cmake --install --prefix P` chooses P after this file is generated. tinyxml2, Qhull and
# tinyobjloader have .pc files (Requires.private); SuiteSparse has none on Debian 12, so its
# libraries are spelled out in Libs.private, from the files Finddiffphys_SuiteSparse.cmake found.
file(RELATIVE_PATH DIFFPHYS_PC_PREFIX_FROM_PCFILEDIR
  /prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig /prefix)
string(REGEX REPLACE "/$" "" DIFFPHYS_PC_PREFIX_FROM_PCFILEDIR "${DIFFPHYS_PC_PREFIX_FROM_PCFILEDIR}")  # "../../" → "../.."
set(DIFFPHYS_PC_SUITESPARSE_LIBS "")
set(_diffphys_pc_dirs "")
foreach(_diffphys_library IN ITEMS ${DIFFPHYS_KLU_LIBRARY} ${DIFFPHYS_AMD_LIBRARY}
        ${DIFFPHYS_COLAMD_LIBRARY} ${DIFFPHYS_BTF_LIBRARY} ${DIFFPHYS_CHOLMOD_LIBRARY}
        ${DIFFPHYS_SUITESPARSECONFIG_LIBRARY})
  get_filename_component(_diffphys_dir ${_diffphys_library} DIRECTORY)
  get_filename_component(_diffphys_name ${_diffphys_library} NAME_WE)
  string(REGEX REPLACE "^lib" "" _diffphys_name ${_diffphys_name})
  # -L only for a directory the linker does not already search (a SuiteSparse of one's own).
  if(NOT _diffphys_dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES AND NOT _diffphys_dir IN_LIST _diffphys_pc_dirs)
    list(APPEND _diffphys_pc_dirs ${_diffphys_dir})
    string(APPEND DIFFPHYS_PC_SUITESPARSE_LIBS " -L${_diffphys_dir}")
  endif()
  string(APPEND DIFFPHYS_PC_SUITESPARSE_LIBS " -l${_diffphys_name}")
endforeach()
string(STRIP "${DIFFPHYS_PC_SUITESPARSE_LIBS}" DIFFPHYS_PC_SUITESPARSE_LIBS)
configure_file(${PROJECT_SOURCE_DIR}/cmake/diffphys.pc.in ${PROJECT_BINARY_DIR}/package/diffphys.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/package/diffphys.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
unset(_diffphys_library)
unset(_diffphys_dir)
unset(_diffphys_name)
unset(_diffphys_pc_dirs)
