# cmake/Finddiffphys_SuiteSparse.cmake — finds the SuiteSparse libraries the diffphys library
# links privately (KLU for the LCP adjoint's sparse LU, adjoint/lcp_vjp.cpp; CHOLMOD for the
# soft Newton step, soft/sparse_cholesky.cpp; and what they need: AMD, COLAMD, BTF,
# SuiteSparse_config) and makes them one imported target, diffphys::SuiteSparse.
#
# Why a find module of our own: Debian 12's libsuitesparse-dev (SuiteSparse 5.12) ships neither
# a CMake package nor pkg-config files, so the libraries are found by header and file name.
# The same file serves the build (src/CMakeLists.txt, through CMAKE_MODULE_PATH) and users of
# the installed package (installed next to diffphysConfig.cmake, which finds it the same way),
# so both link exactly the same libraries.
#
# Result: diffphys_SuiteSparse_FOUND, the cache entries DIFFPHYS_SUITESPARSE_INCLUDE_DIR and
# DIFFPHYS_<NAME>_LIBRARY (set them to point at another SuiteSparse), and the target.
include(FindPackageHandleStandardArgs)

find_path(DIFFPHYS_SUITESPARSE_INCLUDE_DIR NAMES klu.h PATH_SUFFIXES suitesparse)
set(_diffphys_suitesparse_library_vars)
foreach(_diffphys_name klu amd colamd btf cholmod suitesparseconfig)
  string(TOUPPER "${_diffphys_name}" _diffphys_upper)
  find_library(DIFFPHYS_${_diffphys_upper}_LIBRARY ${_diffphys_name})
  list(APPEND _diffphys_suitesparse_library_vars DIFFPHYS_${_diffphys_upper}_LIBRARY)
endforeach()

find_package_handle_standard_args(diffphys_SuiteSparse
  REQUIRED_VARS DIFFPHYS_SUITESPARSE_INCLUDE_DIR ${_diffphys_suitesparse_library_vars}
  REASON_FAILURE_MESSAGE "diffphys needs SuiteSparse's KLU and CHOLMOD (Debian: libsuitesparse-dev)")

if(diffphys_SuiteSparse_FOUND AND NOT TARGET diffphys::SuiteSparse)
  set(_diffphys_suitesparse_libraries)
  foreach(_diffphys_var IN LISTS _diffphys_suitesparse_library_vars)
    list(APPEND _diffphys_suitesparse_libraries "${${_diffphys_var}}")
  endforeach()
  add_library(diffphys::SuiteSparse INTERFACE IMPORTED)
  set_target_properties(diffphys::SuiteSparse PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${DIFFPHYS_SUITESPARSE_INCLUDE_DIR}"
    INTERFACE_LINK_LIBRARIES "${_diffphys_suitesparse_libraries}")
endif()
unset(_diffphys_name)
unset(_diffphys_upper)
unset(_diffphys_var)
unset(_diffphys_suitesparse_libraries)
unset(_diffphys_suitesparse_library_vars)
