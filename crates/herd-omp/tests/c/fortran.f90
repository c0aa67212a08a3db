! The Fortran omp_lib (gfortran -fopenmp): the omp_*_ entry points, taking
! their arguments by reference, with integer(8) (_8_) variants, Fortran locks
! (the lock, or a pointer to it, in an integer) and the constructs gfortran
! lowers to the same GOMP_* calls as C.  Prints check.h's lines:
!     ok NAME / FAIL NAME: details / summary fortran: ...
! and the "# fortran: omp_get_thread_num from PATH; objects:" header run.sh
! uses to see which runtime ran the program.
module checks
  use iso_c_binding
  implicit none
  integer :: nchecks = 0, nfailed = 0

  type, bind(c) :: dl_info
    type(c_ptr) :: fname, fbase, sname, saddr
  end type

  interface
    function dlsym(handle, name) bind(c, name='dlsym')
      import :: c_ptr, c_char
      type(c_ptr), value :: handle
      character(kind=c_char) :: name(*)
      type(c_ptr) :: dlsym
    end function
    function dladdr(addr, info) bind(c, name='dladdr')
      import :: c_ptr, c_int, dl_info
      type(c_ptr), value :: addr
      type(dl_info) :: info
      integer(c_int) :: dladdr
    end function
    function realpath(path, resolved) bind(c, name='realpath')
      import :: c_ptr
      type(c_ptr), value :: path, resolved
      type(c_ptr) :: realpath
    end function
    function strlen(s) bind(c, name='strlen')
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: strlen
    end function
  end interface

contains

  function c_to_f(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    if (.not. c_associated(p)) then
      s = '?'
      return
    end if
    n = int(strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate (character(len=n) :: s)
    do i = 1, n
      s(i:i) = chars(i)
    end do
  end function

  ! The header line: the real path of the object defining omp_get_thread_num.
  subroutine begin()
    type(dl_info) :: info
    type(c_ptr) :: sym, real
    character(len=:), allocatable :: path
    path = '?'
    sym = dlsym(c_null_ptr, 'omp_get_thread_num'//c_null_char)
    if (c_associated(sym)) then
      if (dladdr(sym, info) /= 0) then
        real = realpath(info%fname, c_null_ptr)
        if (c_associated(real)) then
          path = c_to_f(real)
        else
          path = c_to_f(info%fname)
        end if
      end if
    end if
    write (*, '(a)') '# fortran: omp_get_thread_num from '//path//'; objects:'
  end subroutine

  subroutine check(name, cond, details)
    character(len=*), intent(in) :: name, details
    logical, intent(in) :: cond
    nchecks = nchecks + 1
    if (cond) then
      write (*, '(a)') 'ok '//name
    else
      nfailed = nfailed + 1
      write (*, '(a)') 'FAIL '//name//': '//details
    end if
    flush (6)
  end subroutine

  subroutine check_eq(name, got, want)
    character(len=*), intent(in) :: name
    integer(8), intent(in) :: got, want
    character(len=80) :: msg
    write (msg, '(a,i0,a,i0)') 'got ', got, ', expected ', want
    call check(name, got == want, trim(msg))
  end subroutine

  integer function env_int(var, dflt)
    character(len=*), intent(in) :: var
    integer, intent(in) :: dflt
    character(len=32) :: v
    integer :: st, n
    call get_environment_variable(var, v, status=st)
    env_int = dflt
    if (st == 0 .and. len_trim(v) > 0) then
      read (v, *, iostat=st) n
      if (st == 0) env_int = n
    end if
  end function
end module checks

program fortran_omp
  use omp_lib
  use checks
  implicit none
  integer, parameter :: n = 10000
  integer :: i, nthr, expect, hits(0:63), bad, counter, crit, atom, level_in, level_out
  integer :: got_kind, got_chunk, np, p, nprocs, tsum
  integer(8) :: chunk8, big, expected_sum
  integer(4), allocatable :: ids4(:)
  integer(8), allocatable :: ids8(:)
  integer(omp_lock_kind) :: lock
  integer(omp_nest_lock_kind) :: nlock
  logical :: in_par, in_par_out, ok_ids, ok_anc
  real(8) :: t0, t1
  integer(omp_sched_kind) :: kind
  integer(omp_allocator_handle_kind) :: al
  type(omp_alloctrait) :: traits(2)
  type(c_ptr) :: mem
  integer(c_intptr_t) :: addr
  integer(omp_event_handle_kind) :: ev
  integer :: fulfilled

  call begin()
  expect = env_int('EXPECT_THREADS', omp_get_max_threads())

  ! ---- team queries and parallel do with a reduction ----
  call check_eq('omp_get_max_threads', int(omp_get_max_threads(), 8), int(expect, 8))
  big = 0
  !$omp parallel do reduction(+:big)
  do i = 1, n
    big = big + i
  end do
  !$omp end parallel do
  expected_sum = int(n, 8)*(n + 1)/2
  call check_eq('parallel do reduction(+)', big, expected_sum)

  hits = 0
  nthr = -1
  level_in = -1
  in_par = .false.
  bad = 0
  ok_anc = .true.
  !$omp parallel shared(hits, nthr, level_in, in_par, ok_anc) reduction(+:bad)
  !$omp atomic
  hits(omp_get_thread_num()) = hits(omp_get_thread_num()) + 1
  !$omp single
  nthr = omp_get_num_threads()
  level_in = omp_get_level()
  in_par = omp_in_parallel()
  !$omp end single
  if (omp_get_ancestor_thread_num(1) /= omp_get_thread_num()) bad = bad + 1
  if (omp_get_ancestor_thread_num(1_8) /= omp_get_thread_num()) bad = bad + 1
  if (omp_get_team_size(1) /= omp_get_num_threads()) bad = bad + 1
  if (omp_get_team_size(1_8) /= omp_get_num_threads()) bad = bad + 1
  if (omp_get_ancestor_thread_num(0) /= 0 .or. omp_get_team_size(0) /= 1) bad = bad + 1
  !$omp end parallel
  call check_eq('omp_get_num_threads in a region', int(nthr, 8), int(expect, 8))
  call check('omp_get_thread_num: each thread once', all(hits(0:nthr - 1) == 1) .and. all(hits(nthr:) == 0), &
             'thread numbers not 0..n-1 once each')
  call check_eq('omp_get_level in a region', int(level_in, 8), 1_8)
  level_out = omp_get_level()
  call check_eq('omp_get_level outside', int(level_out, 8), 0_8)
  in_par_out = omp_in_parallel()
  call check('omp_in_parallel', (in_par .eqv. (nthr > 1)) .and. .not. in_par_out, 'wrong in or outside the region')
  call check_eq('omp_get_ancestor_thread_num / omp_get_team_size (4 and 8 bytes)', int(bad, 8), 0_8)

  ! ---- omp_set_num_threads (both kinds) ----
  call omp_set_num_threads(2)
  call check_eq('omp_set_num_threads -> omp_get_max_threads', int(omp_get_max_threads(), 8), 2_8)
  nthr = 0
  !$omp parallel
  !$omp master
  nthr = omp_get_num_threads()
  !$omp end master
  !$omp end parallel
  call check_eq('omp_set_num_threads(2): team size', int(nthr, 8), 2_8)
  call omp_set_num_threads(3_8)
  call check_eq('omp_set_num_threads(integer(8))', int(omp_get_max_threads(), 8), 3_8)
  call omp_set_num_threads(expect)

  ! ---- critical, atomic ----
  crit = 0
  atom = 0
  !$omp parallel do
  do i = 1, n
    !$omp critical (fcrit)
    crit = crit + 1
    !$omp end critical (fcrit)
    !$omp atomic
    atom = atom + 2
  end do
  !$omp end parallel do
  call check_eq('critical', int(crit, 8), int(n, 8))
  call check_eq('atomic', int(atom, 8), int(2*n, 8))

  ! ---- simple lock: the integer is the lock ----
  call omp_init_lock(lock)
  call check('omp_test_lock on a free lock', omp_test_lock(lock), 'false')
  call check('omp_test_lock on a held lock', .not. omp_test_lock(lock), 'true')
  call omp_unset_lock(lock)
  counter = 0
  !$omp parallel do
  do i = 1, n
    call omp_set_lock(lock)
    counter = counter + 1
    call omp_unset_lock(lock)
  end do
  !$omp end parallel do
  call omp_destroy_lock(lock)
  call check_eq('omp_set_lock / omp_unset_lock', int(counter, 8), int(n, 8))

  ! ---- nested lock: the integer holds a pointer ----
  call omp_init_nest_lock(nlock)
  call omp_set_nest_lock(nlock)
  call omp_set_nest_lock(nlock)
  call check_eq('omp_test_nest_lock counts the nesting', int(omp_test_nest_lock(nlock), 8), 3_8)
  call omp_unset_nest_lock(nlock)
  call omp_unset_nest_lock(nlock)
  call omp_unset_nest_lock(nlock)
  counter = 0
  !$omp parallel do
  do i = 1, n
    call omp_set_nest_lock(nlock)
    call omp_set_nest_lock(nlock)
    counter = counter + 1
    call omp_unset_nest_lock(nlock)
    call omp_unset_nest_lock(nlock)
  end do
  !$omp end parallel do
  call omp_destroy_nest_lock(nlock)
  call check_eq('omp_set_nest_lock twice per iteration', int(counter, 8), int(n, 8))

  ! ---- tasks ----
  tsum = 0
  !$omp parallel
  !$omp single
  do i = 1, 100
    !$omp task firstprivate(i) shared(tsum)
    !$omp atomic
    tsum = tsum + i
    !$omp end task
  end do
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call check_eq('tasks and taskwait', int(tsum, 8), 5050_8)

  ! ---- time ----
  t0 = omp_get_wtime()
  do while (omp_get_wtime() - t0 < 0.001d0)
  end do
  t1 = omp_get_wtime()
  call check('omp_get_wtime advances', t1 > t0, 'did not advance')
  call check('omp_get_wtick', omp_get_wtick() > 0d0 .and. omp_get_wtick() < 1d0, 'not in (0, 1)')

  ! ---- ICVs through both kinds ----
  call omp_set_schedule(omp_sched_dynamic, 5)
  call omp_get_schedule(kind, got_chunk)
  call check('omp_set_schedule / omp_get_schedule', kind == omp_sched_dynamic .and. got_chunk == 5, 'round trip lost')
  chunk8 = 7
  call omp_set_schedule(omp_sched_guided, chunk8)
  chunk8 = 0
  call omp_get_schedule(kind, chunk8)
  got_kind = kind
  call check('omp_set_schedule / omp_get_schedule (integer(8) chunk)', got_kind == omp_sched_guided .and. chunk8 == 7, &
             'round trip lost')
  call omp_set_max_active_levels(3)
  call check_eq('omp_set_max_active_levels', int(omp_get_max_active_levels(), 8), 3_8)
  call omp_set_max_active_levels(1_8)
  call check_eq('omp_set_max_active_levels(integer(8))', int(omp_get_max_active_levels(), 8), 1_8)
  call check('omp_get_supported_active_levels', omp_get_supported_active_levels() >= 1, '< 1')
  call omp_set_dynamic(.true.)
  call check('omp_set_dynamic(.true.)', omp_get_dynamic(), 'omp_get_dynamic false')
  call omp_set_dynamic(.false.)
  call check('omp_set_dynamic(.false.)', .not. omp_get_dynamic(), 'omp_get_dynamic true')
  call check('omp_get_thread_limit', omp_get_thread_limit() >= 1, '< 1')
  call check('omp_in_final', .not. omp_in_final(), 'true outside tasks')
  call check('omp_get_cancellation', .not. omp_get_cancellation(), 'true without OMP_CANCELLATION')
  call check_eq('omp_get_proc_bind', int(omp_get_proc_bind(), 8), int(env_int('EXPECT_PROC_BIND', 0), 8))
  call check('omp_is_initial_device', omp_is_initial_device(), 'false on the host')
  call check_eq('omp_get_initial_device', int(omp_get_initial_device(), 8), int(omp_get_num_devices(), 8))
  call check('omp_get_num_procs', omp_get_num_procs() >= 1, '< 1')
  call check_eq('omp_get_max_task_priority', int(omp_get_max_task_priority(), 8), 0_8)

  ! ---- places: the 4- and 8-byte routines agree ----
  np = omp_get_num_places()
  ok_ids = np >= 0
  do p = 0, np - 1
    nprocs = omp_get_place_num_procs(p)
    if (nprocs < 1 .or. nprocs /= omp_get_place_num_procs(int(p, 8))) ok_ids = .false.
    if (nprocs < 1) cycle
    allocate (ids4(nprocs), ids8(nprocs))
    ids4 = -1
    ids8 = -1
    call omp_get_place_proc_ids(p, ids4)
    call omp_get_place_proc_ids(int(p, 8), ids8)
    if (any(ids4 < 0) .or. any(int(ids4, 8) /= ids8)) ok_ids = .false.
    deallocate (ids4, ids8)
  end do
  call check('omp_get_place_num_procs / omp_get_place_proc_ids (4 and 8 bytes)', ok_ids, 'inconsistent place lists')
  call check('omp_get_place_num_procs of a place that does not exist', omp_get_place_num_procs(np) == 0, 'not 0')
  call check('omp_get_num_places with OMP_PLACES', np >= env_int('EXPECT_MIN_PLACES', 0), 'fewer places than expected')

  ! ---- allocators (omp_init_allocator_ takes its traits by reference) ----
  traits(1) = omp_alloctrait(omp_atk_alignment, 64)
  traits(2) = omp_alloctrait(omp_atk_fallback, omp_atv_null_fb)
  al = omp_init_allocator(omp_default_mem_space, 2, traits)
  call check('omp_init_allocator', al /= omp_null_allocator, 'omp_null_allocator')
  mem = omp_alloc(100_c_size_t, al)
  addr = transfer(mem, addr)
  call check('omp_alloc honours the alignment trait', c_associated(mem) .and. mod(addr, 64_c_intptr_t) == 0, &
             'NULL or not 64-byte aligned')
  call omp_free(mem, al)
  call omp_destroy_allocator(al)
  traits(1) = omp_alloctrait(omp_atk_alignment, 3)
  al = omp_init_allocator(omp_default_mem_space, 1_8, traits)
  call check('omp_init_allocator(integer(8)) refuses alignment 3', al == omp_null_allocator, 'an allocator')
  call omp_set_default_allocator(omp_low_lat_mem_alloc)
  call check('omp_set_default_allocator', omp_get_default_allocator() == omp_low_lat_mem_alloc, 'not kept')
  call omp_set_default_allocator(omp_default_mem_alloc)

  ! ---- detach: omp_fulfill_event takes the handle by value ----
  fulfilled = 0
  !$omp parallel
  !$omp single
  !$omp task detach(ev)
  !$omp atomic
  fulfilled = fulfilled + 1
  call omp_fulfill_event(ev)
  !$omp end task
  !$omp taskwait
  !$omp end single
  !$omp end parallel
  call check_eq('detach: a task fulfilling its own event completes', int(fulfilled, 8), 1_8)

  write (*, '(a,i0,a,i0,a)') 'summary fortran: ', nchecks, ' checks, ', nfailed, ' failed, 0 known deviations (xfail)'
  flush (6)
  if (nfailed > 0) call exit(1)
end program fortran_omp
