! An unmodified Fortran program built against the system LAPACK (-llapack
! -lblas): run with libherd_lapack.so preloaded, its DPOTRF and DGEMM calls go
! to herd. It checks its own results and asks herd how many calls it took.
program solve
  use iso_c_binding
  implicit none
  interface
    integer(c_int64_t) function herd_lapack_calls(name) bind(c, name="calls_through_herd")
      import :: c_int64_t, c_char
      character(kind=c_char), dimension(*) :: name
    end function
  end interface
  integer, parameter :: n = 400
  double precision :: a(n, n), l(n, n), r(n, n)
  integer :: i, j, info
  do j = 1, n
    do i = 1, n
      a(i, j) = 1.0d0 / dble(i + j - 1)
    end do
    a(j, j) = a(j, j) + dble(n)
  end do
  l = a
  call dpotrf('L', n, l, n, info)
  if (info /= 0) stop 'dpotrf failed'
  do j = 1, n
    l(1:j-1, j) = 0.0d0
  end do
  r = a
  call dgemm('N', 'T', n, n, n, -1.0d0, l, n, l, n, 1.0d0, r, n)
  if (maxval(abs(r)) > 1.0d-10 * maxval(abs(a))) stop 'L*L^T differs from A'
  if (herd_lapack_calls(c_char_'dpotrf'//c_null_char) /= 1) stop 'dpotrf did not reach herd'
  if (herd_lapack_calls(c_char_'dgemm'//c_null_char) /= 1) stop 'dgemm did not reach herd'
  print '(a)', 'fortran: ok'
end program
