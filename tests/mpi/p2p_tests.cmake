# MPI integration tests of checkmpi-p2p: each mode at 2 ranks (ring also at
# 4, nbc at 4 and 8), validation, bad options. Iteration counts stay tiny: MPICH busy-polls
# and crawls when ranks outnumber cores.
checkmpi_script_test(p2p_pingpong_np2 p2p_mode.sh 2 pingpong -m 1:65536 -i 50 -x 5)
# --block 1: every iteration timed alone, as osu_latency (bench/p2p_osu.sh compares so)
checkmpi_script_test(p2p_pingpong_block1_np2 p2p_mode.sh 2 pingpong -m 1:4096 -i 50 -x 5 --block 1)
checkmpi_script_test(p2p_bw_np2 p2p_mode.sh 2 bw -m 1:65536 -i 8 -x 2 -W 16)
checkmpi_script_test(p2p_ring_np2 p2p_mode.sh 2 ring -m 1:4096 -i 20 -x 2)
checkmpi_script_test(p2p_ring_np4 p2p_mode.sh 4 ring -m 1:65536 -i 8 -x 1)
checkmpi_script_test(p2p_loggp_np2 p2p_mode.sh 2 loggp -m 1:65536 -i 20 -x 2)
# self at 1 and 2 ranks (rank 0 alone measures; up to 64 KiB, where the copy,
# not the call, sets the time); barrier at 2, 4 and 8 (few
# iterations: MPICH polls, and 8 ranks share 2 cores).
checkmpi_script_test(p2p_self_np1 p2p_mode.sh 1 self -m 1:65536 -i 50 -x 5)
checkmpi_script_test(p2p_self_np2 p2p_mode.sh 2 self -m 1:65536 -i 20 -x 2 -c)
foreach(np 2 4 8)
  checkmpi_script_test(p2p_barrier_np${np} p2p_mode.sh ${np} barrier -i 10 -x 2)
endforeach()
checkmpi_script_test(p2p_datatype_np2 p2p_mode.sh 2 datatype -m 4:16384 -i 10 -x 2)
# nbc at 2, 4 and 8 ranks, OSU-style ops and pencil transposes (2x2, 2x4 on
# uneven grids), every run validated (-c); MPICH at 8 ranks on 2 cores takes
# seconds per size, hence one or two tiny sizes there.
checkmpi_script_test(p2p_nbc_np2 p2p_mode.sh 2 nbc -m 4:64 -i 4 -x 1 --progress 0,2 -c)
checkmpi_script_test(p2p_nbc_np4 p2p_mode.sh 4 nbc --op ialltoall,ialltoallv -m 4:16 -i 2 -x 1 --progress 0,2 -c)
checkmpi_script_test(p2p_nbc_np8 p2p_mode.sh 8 nbc --op iallreduce,ibcast -m 4:8 -i 2 -x 1 -c)
checkmpi_script_test(p2p_nbc_pencil_2x2 p2p_mode.sh 4 nbc --pencil 2x2 --grid 9x7x5,8x8x8 -i 2 -x 1 --progress 0,2 -c)
checkmpi_script_test(p2p_nbc_pencil_2x4 p2p_mode.sh 8 nbc --pencil 2x4 --grid 13x11x10 -i 2 -x 1 -c)
checkmpi_script_test(p2p_nbc p2p_nbc.sh)
# The OSU counterparts (issue 33) at 2 and 4 ranks, validated (-c), few
# sizes and iterations (MPICH polls; 4 ranks share 2 cores).
foreach(np 2 4)
  checkmpi_script_test(p2p_bibw_np${np} p2p_mode.sh ${np} bibw -m 1:4096 -i 4 -x 1 -W 4 -c)
  checkmpi_script_test(p2p_mbw_mr_np${np} p2p_mode.sh ${np} mbw-mr -m 1:4096 -i 4 -x 1 -W 4 -c)
  checkmpi_script_test(p2p_coll_np${np} p2p_mode.sh ${np} coll -m 4:32 -i 3 -x 1 -c)
  checkmpi_script_test(p2p_rma_np${np} p2p_mode.sh ${np} rma -m 1:256 -i 4 -x 1 -c)
  checkmpi_script_test(p2p_pingpong_threads_np${np} p2p_mode.sh ${np} pingpong --threads 2 -m 1:256 -i 4 -x 1 -c)
endforeach()
# Iterations the threads cannot share evenly (5 over 3: 2, 2, 1), and fewer than threads (2 over 3: one each).
checkmpi_script_test(p2p_pingpong_threads_uneven p2p_mode.sh 2 pingpong --threads 3 -m 1:16 -i 5 -x 2 -c)
checkmpi_script_test(p2p_pingpong_threads_few p2p_mode.sh 2 pingpong --threads 3 -m 1:16 -i 2 -x 0 -c)
checkmpi_script_test(p2p_rma_syncs p2p_rma.sh)
# Sizes under 16 bytes only: MPICH 4.0.2 lost puts into windows that small.
checkmpi_script_test(p2p_rma_small_window p2p_mode.sh 2 rma -m 1:8 -i 3 -x 1 -c --sync lock)
checkmpi_script_test(p2p_validate p2p_validate.sh)
checkmpi_script_test(p2p_features p2p_features.sh)
foreach(np 1 2)
  checkmpi_script_test(p2p_errors_np${np} p2p_errors.sh ${np})
  set_tests_properties(p2p_errors_np${np} PROPERTIES
    ENVIRONMENT "${CHECKMPI_TEST_ENV};CHECKMPI_CUDA_BUILD=${CHECKMPI_ENABLE_CUDA}")
endforeach()
# --buffer cuda in every mode that has it (label gpu): exit code 77 (no GPU
# visible) is reported as skipped.
if(CHECKMPI_ENABLE_CUDA)
  foreach(np 2 4)
    checkmpi_script_test(gpu_p2p_buffer_np${np} p2p_gpu.sh ${np})
    set_tests_properties(gpu_p2p_buffer_np${np} PROPERTIES LABELS gpu SKIP_RETURN_CODE 77)
  endforeach()
endif()
checkmpi_script_test(p2p_watchdog watchdog.sh p2p)
checkmpi_script_test(p2p_osu_hold p2p_osu_hold.sh ${MPI_CXX_COMPILER})
checkmpi_script_test(p2p_osu_modes p2p_osu_modes.sh)
