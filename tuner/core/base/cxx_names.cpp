// The names generated C++ cannot declare as they are, and the one way a free text becomes an
// identifier (cxx_names.hpp).
#include <tuner/core/base/cxx_names.hpp>

#include <algorithm>
#include <cctype>
#include <set>

namespace tune {

namespace {

// C++20's keywords and the identifiers with a special meaning, each between spaces.
constexpr std::string_view cxx_keywords =
    " alignas alignof and and_eq asm auto bitand bitor bool break case catch char char8_t "
    "char16_t char32_t class compl concept const consteval constexpr constinit const_cast "
    "continue co_await co_return co_yield decltype default delete do double dynamic_cast "
    "else enum explicit export extern false float for friend goto if inline int long mutable "
    "namespace new noexcept not not_eq nullptr operator or or_eq private protected public "
    "register reinterpret_cast requires return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid "
    "typename union unsigned using virtual void volatile wchar_t while xor xor_eq final "
    "override import module ";

// The macros without a leading '_' that a program sees once it includes every standard header
// (`#include <bits/stdc++.h>`, GCC 12 with libstdc++ and glibc 2.36, -std=gnu++20, listed by
// `g++ -dM -E`): the C standard's (NULL, EOF, errno, assert, the limits of <climits>,
// <cstdint>, <cfloat>, the formats of <cinttypes>, <cerrno>'s codes, <csignal>, <clocale>,
// <cfenv>, <cmath>), and what glibc adds under _GNU_SOURCE, which g++ always defines (POSIX
// limits, signals, clocks, M_PI, the syscall numbers of <atomic>'s waits). Then what GCC, Clang
// and nvcc predefine in GNU modes: linux and unix here, i386, sun, sparc, mips and vax on
// other hosts. Other C libraries define a subset of these.
constexpr std::string_view predefined_macros =
    "ADJ_ESTERROR ADJ_FREQUENCY ADJ_MAXERROR ADJ_MICRO ADJ_NANO ADJ_OFFSET "
    "ADJ_OFFSET_SINGLESHOT ADJ_OFFSET_SS_READ ADJ_SETOFFSET ADJ_STATUS ADJ_TAI ADJ_TICK "
    "ADJ_TIMECONST AIO_PRIO_DELTA_MAX ATOMIC_BOOL_LOCK_FREE ATOMIC_CHAR16_T_LOCK_FREE "
    "ATOMIC_CHAR32_T_LOCK_FREE ATOMIC_CHAR8_T_LOCK_FREE ATOMIC_CHAR_LOCK_FREE ATOMIC_FLAG_INIT "
    "ATOMIC_INT_LOCK_FREE ATOMIC_LLONG_LOCK_FREE ATOMIC_LONG_LOCK_FREE ATOMIC_POINTER_LOCK_FREE "
    "ATOMIC_SHORT_LOCK_FREE ATOMIC_VAR_INIT ATOMIC_WCHAR_T_LOCK_FREE BC_BASE_MAX BC_DIM_MAX "
    "BC_SCALE_MAX BC_STRING_MAX BIG_ENDIAN BOOL_MAX BOOL_WIDTH BUFSIZ BUS_ADRALN BUS_ADRERR "
    "BUS_MCEERR_AO BUS_MCEERR_AR BUS_OBJERR BYTE_ORDER CHARCLASS_NAME_MAX CHAR_BIT CHAR_MAX "
    "CHAR_MIN CHAR_WIDTH CLD_CONTINUED CLD_DUMPED CLD_EXITED CLD_KILLED CLD_STOPPED CLD_TRAPPED "
    "CLOCKS_PER_SEC CLOCK_BOOTTIME CLOCK_BOOTTIME_ALARM CLOCK_MONOTONIC CLOCK_MONOTONIC_COARSE "
    "CLOCK_MONOTONIC_RAW CLOCK_PROCESS_CPUTIME_ID CLOCK_REALTIME CLOCK_REALTIME_ALARM "
    "CLOCK_REALTIME_COARSE CLOCK_TAI CLOCK_THREAD_CPUTIME_ID CLONE_CHILD_CLEARTID "
    "CLONE_CHILD_SETTID CLONE_DETACHED CLONE_FILES CLONE_FS CLONE_IO CLONE_NEWCGROUP "
    "CLONE_NEWIPC CLONE_NEWNET CLONE_NEWNS CLONE_NEWPID CLONE_NEWTIME CLONE_NEWUSER "
    "CLONE_NEWUTS CLONE_PARENT CLONE_PARENT_SETTID CLONE_PIDFD CLONE_PTRACE CLONE_SETTLS "
    "CLONE_SIGHAND CLONE_SYSVSEM CLONE_THREAD CLONE_UNTRACED CLONE_VFORK CLONE_VM "
    "CLOSE_RANGE_CLOEXEC CLOSE_RANGE_UNSHARE COLL_WEIGHTS_MAX CPU_ALLOC CPU_ALLOC_SIZE CPU_AND "
    "CPU_AND_S CPU_CLR CPU_CLR_S CPU_COUNT CPU_COUNT_S CPU_EQUAL CPU_EQUAL_S CPU_FREE CPU_ISSET "
    "CPU_ISSET_S CPU_OR CPU_OR_S CPU_SET CPU_SETSIZE CPU_SET_S CPU_XOR CPU_XOR_S CPU_ZERO "
    "CPU_ZERO_S CSIGNAL DBL_DECIMAL_DIG DBL_DIG DBL_EPSILON DBL_HAS_SUBNORM DBL_MANT_DIG "
    "DBL_MAX DBL_MAX_10_EXP DBL_MAX_EXP DBL_MIN DBL_MIN_10_EXP DBL_MIN_EXP DBL_TRUE_MIN "
    "DECIMAL_DIG DELAYTIMER_MAX E2BIG EACCES EADDRINUSE EADDRNOTAVAIL EADV EAFNOSUPPORT EAGAIN "
    "EALREADY EBADE EBADF EBADFD EBADMSG EBADR EBADRQC EBADSLT EBFONT EBUSY ECANCELED ECHILD "
    "ECHRNG ECOMM ECONNABORTED ECONNREFUSED ECONNRESET EDEADLK EDEADLOCK EDESTADDRREQ EDOM "
    "EDOTDOT EDQUOT EEXIST EFAULT EFBIG EHOSTDOWN EHOSTUNREACH EHWPOISON EIDRM EILSEQ "
    "EINPROGRESS EINTR EINVAL EIO EISCONN EISDIR EISNAM EKEYEXPIRED EKEYREJECTED EKEYREVOKED "
    "EL2HLT EL2NSYNC EL3HLT EL3RST ELIBACC ELIBBAD ELIBEXEC ELIBMAX ELIBSCN ELNRNG ELOOP "
    "EMEDIUMTYPE EMFILE EMLINK EMSGSIZE EMULTIHOP ENAMETOOLONG ENAVAIL ENETDOWN ENETRESET "
    "ENETUNREACH ENFILE ENOANO ENOBUFS ENOCSI ENODATA ENODEV ENOENT ENOEXEC ENOKEY ENOLCK "
    "ENOLINK ENOMEDIUM ENOMEM ENOMSG ENONET ENOPKG ENOPROTOOPT ENOSPC ENOSR ENOSTR ENOSYS "
    "ENOTBLK ENOTCONN ENOTDIR ENOTEMPTY ENOTNAM ENOTRECOVERABLE ENOTSOCK ENOTSUP ENOTTY "
    "ENOTUNIQ ENXIO EOF EOPNOTSUPP EOVERFLOW EOWNERDEAD EPERM EPFNOSUPPORT EPIPE EPROTO "
    "EPROTONOSUPPORT EPROTOTYPE ERANGE EREMCHG EREMOTE EREMOTEIO ERESTART ERFKILL EROFS "
    "ESHUTDOWN ESOCKTNOSUPPORT ESPIPE ESRCH ESRMNT ESTALE ESTRPIPE ETIME ETIMEDOUT ETOOMANYREFS "
    "ETXTBSY EUCLEAN EUNATCH EUSERS EWOULDBLOCK EXDEV EXFULL EXIT_FAILURE EXIT_SUCCESS "
    "EXPR_NEST_MAX FD_CLR FD_ISSET FD_SET FD_SETSIZE FD_ZERO FE_ALL_EXCEPT FE_DFL_ENV "
    "FE_DFL_MODE FE_DIVBYZERO FE_DOWNWARD FE_INEXACT FE_INVALID FE_NOMASK_ENV FE_OVERFLOW "
    "FE_TONEAREST FE_TOWARDZERO FE_UNDERFLOW FE_UPWARD FILENAME_MAX FLT_DECIMAL_DIG FLT_DIG "
    "FLT_EPSILON FLT_EVAL_METHOD FLT_HAS_SUBNORM FLT_MANT_DIG FLT_MAX FLT_MAX_10_EXP "
    "FLT_MAX_EXP FLT_MIN FLT_MIN_10_EXP FLT_MIN_EXP FLT_RADIX FLT_ROUNDS FLT_TRUE_MIN FOPEN_MAX "
    "FPE_CONDTRAP FPE_FLTDIV FPE_FLTINV FPE_FLTOVF FPE_FLTRES FPE_FLTSUB FPE_FLTUND FPE_FLTUNK "
    "FPE_INTDIV FPE_INTOVF FP_ILOGB0 FP_ILOGBNAN FP_INFINITE FP_INT_DOWNWARD FP_INT_TONEAREST "
    "FP_INT_TONEARESTFROMZERO FP_INT_TOWARDZERO FP_INT_UPWARD FP_LLOGB0 FP_LLOGBNAN FP_NAN "
    "FP_NORMAL FP_SUBNORMAL FP_XSTATE_MAGIC1 FP_XSTATE_MAGIC2 FP_XSTATE_MAGIC2_SIZE FP_ZERO "
    "F_LOCK F_OK F_TEST F_TLOCK F_ULOCK HOST_NAME_MAX HUGE_VAL HUGE_VALF HUGE_VALL "
    "HUGE_VAL_F128 HUGE_VAL_F32 HUGE_VAL_F32X HUGE_VAL_F64 HUGE_VAL_F64X ILL_BADIADDR "
    "ILL_BADSTK ILL_COPROC ILL_ILLADR ILL_ILLOPC ILL_ILLOPN ILL_ILLTRP ILL_PRVOPC ILL_PRVREG "
    "INFINITY INT16_C INT16_MAX INT16_MIN INT16_WIDTH INT32_C INT32_MAX INT32_MIN INT32_WIDTH "
    "INT64_C INT64_MAX INT64_MIN INT64_WIDTH INT8_C INT8_MAX INT8_MIN INT8_WIDTH INTMAX_C "
    "INTMAX_MAX INTMAX_MIN INTMAX_WIDTH INTPTR_MAX INTPTR_MIN INTPTR_WIDTH INT_FAST16_MAX "
    "INT_FAST16_MIN INT_FAST16_WIDTH INT_FAST32_MAX INT_FAST32_MIN INT_FAST32_WIDTH "
    "INT_FAST64_MAX INT_FAST64_MIN INT_FAST64_WIDTH INT_FAST8_MAX INT_FAST8_MIN INT_FAST8_WIDTH "
    "INT_LEAST16_MAX INT_LEAST16_MIN INT_LEAST16_WIDTH INT_LEAST32_MAX INT_LEAST32_MIN "
    "INT_LEAST32_WIDTH INT_LEAST64_MAX INT_LEAST64_MIN INT_LEAST64_WIDTH INT_LEAST8_MAX "
    "INT_LEAST8_MIN INT_LEAST8_WIDTH INT_MAX INT_MIN INT_WIDTH IOV_MAX ITIMER_PROF ITIMER_REAL "
    "ITIMER_VIRTUAL LC_ADDRESS LC_ADDRESS_MASK LC_ALL LC_ALL_MASK LC_COLLATE LC_COLLATE_MASK "
    "LC_CTYPE LC_CTYPE_MASK LC_GLOBAL_LOCALE LC_IDENTIFICATION LC_IDENTIFICATION_MASK "
    "LC_MEASUREMENT LC_MEASUREMENT_MASK LC_MESSAGES LC_MESSAGES_MASK LC_MONETARY "
    "LC_MONETARY_MASK LC_NAME LC_NAME_MASK LC_NUMERIC LC_NUMERIC_MASK LC_PAPER LC_PAPER_MASK "
    "LC_TELEPHONE LC_TELEPHONE_MASK LC_TIME LC_TIME_MASK LDBL_DECIMAL_DIG LDBL_DIG LDBL_EPSILON "
    "LDBL_HAS_SUBNORM LDBL_MANT_DIG LDBL_MAX LDBL_MAX_10_EXP LDBL_MAX_EXP LDBL_MIN "
    "LDBL_MIN_10_EXP LDBL_MIN_EXP LDBL_TRUE_MIN LINE_MAX LITTLE_ENDIAN LLONG_MAX LLONG_MIN "
    "LLONG_WIDTH LOGIN_NAME_MAX LONG_BIT LONG_LONG_MAX LONG_LONG_MIN LONG_MAX LONG_MIN "
    "LONG_WIDTH L_INCR L_SET L_XTND L_ctermid L_cuserid L_tmpnam MATH_ERREXCEPT MATH_ERRNO "
    "MAXFLOAT MAX_CANON MAX_INPUT MB_CUR_MAX MB_LEN_MAX MINSIGSTKSZ MOD_CLKA MOD_CLKB "
    "MOD_ESTERROR MOD_FREQUENCY MOD_MAXERROR MOD_MICRO MOD_NANO MOD_OFFSET MOD_STATUS MOD_TAI "
    "MOD_TIMECONST MQ_PRIO_MAX M_1_PI M_1_PIf M_1_PIf128 M_1_PIf32 M_1_PIf32x M_1_PIf64 "
    "M_1_PIf64x M_1_PIl M_2_PI M_2_PIf M_2_PIf128 M_2_PIf32 M_2_PIf32x M_2_PIf64 M_2_PIf64x "
    "M_2_PIl M_2_SQRTPI M_2_SQRTPIf M_2_SQRTPIf128 M_2_SQRTPIf32 M_2_SQRTPIf32x M_2_SQRTPIf64 "
    "M_2_SQRTPIf64x M_2_SQRTPIl M_E M_Ef M_Ef128 M_Ef32 M_Ef32x M_Ef64 M_Ef64x M_El M_LN10 "
    "M_LN10f M_LN10f128 M_LN10f32 M_LN10f32x M_LN10f64 M_LN10f64x M_LN10l M_LN2 M_LN2f "
    "M_LN2f128 M_LN2f32 M_LN2f32x M_LN2f64 M_LN2f64x M_LN2l M_LOG10E M_LOG10Ef M_LOG10Ef128 "
    "M_LOG10Ef32 M_LOG10Ef32x M_LOG10Ef64 M_LOG10Ef64x M_LOG10El M_LOG2E M_LOG2Ef M_LOG2Ef128 "
    "M_LOG2Ef32 M_LOG2Ef32x M_LOG2Ef64 M_LOG2Ef64x M_LOG2El M_PI M_PI_2 M_PI_2f M_PI_2f128 "
    "M_PI_2f32 M_PI_2f32x M_PI_2f64 M_PI_2f64x M_PI_2l M_PI_4 M_PI_4f M_PI_4f128 M_PI_4f32 "
    "M_PI_4f32x M_PI_4f64 M_PI_4f64x M_PI_4l M_PIf M_PIf128 M_PIf32 M_PIf32x M_PIf64 M_PIf64x "
    "M_PIl M_SQRT1_2 M_SQRT1_2f M_SQRT1_2f128 M_SQRT1_2f32 M_SQRT1_2f32x M_SQRT1_2f64 "
    "M_SQRT1_2f64x M_SQRT1_2l M_SQRT2 M_SQRT2f M_SQRT2f128 M_SQRT2f32 M_SQRT2f32x M_SQRT2f64 "
    "M_SQRT2f64x M_SQRT2l NAME_MAX NAN NFDBITS NGREG NGROUPS_MAX NL_ARGMAX NL_LANGMAX NL_MSGMAX "
    "NL_NMAX NL_SETMAX NL_TEXTMAX NSIG NULL NZERO PATH_MAX PDP_ENDIAN PIPE_BUF POLL_ERR "
    "POLL_HUP POLL_IN POLL_MSG POLL_OUT POLL_PRI PRIX16 PRIX32 PRIX64 PRIX8 PRIXFAST16 "
    "PRIXFAST32 PRIXFAST64 PRIXFAST8 PRIXLEAST16 PRIXLEAST32 PRIXLEAST64 PRIXLEAST8 PRIXMAX "
    "PRIXPTR PRId16 PRId32 PRId64 PRId8 PRIdFAST16 PRIdFAST32 PRIdFAST64 PRIdFAST8 PRIdLEAST16 "
    "PRIdLEAST32 PRIdLEAST64 PRIdLEAST8 PRIdMAX PRIdPTR PRIi16 PRIi32 PRIi64 PRIi8 PRIiFAST16 "
    "PRIiFAST32 PRIiFAST64 PRIiFAST8 PRIiLEAST16 PRIiLEAST32 PRIiLEAST64 PRIiLEAST8 PRIiMAX "
    "PRIiPTR PRIo16 PRIo32 PRIo64 PRIo8 PRIoFAST16 PRIoFAST32 PRIoFAST64 PRIoFAST8 PRIoLEAST16 "
    "PRIoLEAST32 PRIoLEAST64 PRIoLEAST8 PRIoMAX PRIoPTR PRIu16 PRIu32 PRIu64 PRIu8 PRIuFAST16 "
    "PRIuFAST32 PRIuFAST64 PRIuFAST8 PRIuLEAST16 PRIuLEAST32 PRIuLEAST64 PRIuLEAST8 PRIuMAX "
    "PRIuPTR PRIx16 PRIx32 PRIx64 PRIx8 PRIxFAST16 PRIxFAST32 PRIxFAST64 PRIxFAST8 PRIxLEAST16 "
    "PRIxLEAST32 PRIxLEAST64 PRIxLEAST8 PRIxMAX PRIxPTR PTHREAD_ADAPTIVE_MUTEX_INITIALIZER_NP "
    "PTHREAD_ATTR_NO_SIGMASK_NP PTHREAD_BARRIER_SERIAL_THREAD PTHREAD_CANCELED "
    "PTHREAD_CANCEL_ASYNCHRONOUS PTHREAD_CANCEL_DEFERRED PTHREAD_CANCEL_DISABLE "
    "PTHREAD_CANCEL_ENABLE PTHREAD_COND_INITIALIZER PTHREAD_CREATE_DETACHED "
    "PTHREAD_CREATE_JOINABLE PTHREAD_DESTRUCTOR_ITERATIONS "
    "PTHREAD_ERRORCHECK_MUTEX_INITIALIZER_NP PTHREAD_EXPLICIT_SCHED PTHREAD_INHERIT_SCHED "
    "PTHREAD_KEYS_MAX PTHREAD_MUTEX_INITIALIZER PTHREAD_ONCE_INIT PTHREAD_PROCESS_PRIVATE "
    "PTHREAD_PROCESS_SHARED PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP PTHREAD_RWLOCK_INITIALIZER "
    "PTHREAD_RWLOCK_WRITER_NONRECURSIVE_INITIALIZER_NP PTHREAD_SCOPE_PROCESS "
    "PTHREAD_SCOPE_SYSTEM PTHREAD_STACK_MIN PTRDIFF_MAX PTRDIFF_MIN PTRDIFF_WIDTH P_tmpdir "
    "RAND_MAX REG_CR2 REG_CSGSFS REG_EFL REG_ERR REG_OLDMASK REG_R10 REG_R11 REG_R12 REG_R13 "
    "REG_R14 REG_R15 REG_R8 REG_R9 REG_RAX REG_RBP REG_RBX REG_RCX REG_RDI REG_RDX REG_RIP "
    "REG_RSI REG_RSP REG_TRAPNO RENAME_EXCHANGE RENAME_NOREPLACE RENAME_WHITEOUT RE_DUP_MAX "
    "RTSIG_MAX R_OK SA_INTERRUPT SA_NOCLDSTOP SA_NOCLDWAIT SA_NODEFER SA_NOMASK SA_ONESHOT "
    "SA_ONSTACK SA_RESETHAND SA_RESTART SA_SIGINFO SA_STACK SCHAR_MAX SCHAR_MIN SCHAR_WIDTH "
    "SCHED_BATCH SCHED_DEADLINE SCHED_FIFO SCHED_IDLE SCHED_ISO SCHED_OTHER SCHED_RESET_ON_FORK "
    "SCHED_RR SCNd16 SCNd32 SCNd64 SCNd8 SCNdFAST16 SCNdFAST32 SCNdFAST64 SCNdFAST8 SCNdLEAST16 "
    "SCNdLEAST32 SCNdLEAST64 SCNdLEAST8 SCNdMAX SCNdPTR SCNi16 SCNi32 SCNi64 SCNi8 SCNiFAST16 "
    "SCNiFAST32 SCNiFAST64 SCNiFAST8 SCNiLEAST16 SCNiLEAST32 SCNiLEAST64 SCNiLEAST8 SCNiMAX "
    "SCNiPTR SCNo16 SCNo32 SCNo64 SCNo8 SCNoFAST16 SCNoFAST32 SCNoFAST64 SCNoFAST8 SCNoLEAST16 "
    "SCNoLEAST32 SCNoLEAST64 SCNoLEAST8 SCNoMAX SCNoPTR SCNu16 SCNu32 SCNu64 SCNu8 SCNuFAST16 "
    "SCNuFAST32 SCNuFAST64 SCNuFAST8 SCNuLEAST16 SCNuLEAST32 SCNuLEAST64 SCNuLEAST8 SCNuMAX "
    "SCNuPTR SCNx16 SCNx32 SCNx64 SCNx8 SCNxFAST16 SCNxFAST32 SCNxFAST64 SCNxFAST8 SCNxLEAST16 "
    "SCNxLEAST32 SCNxLEAST64 SCNxLEAST8 SCNxMAX SCNxPTR SEEK_CUR SEEK_DATA SEEK_END SEEK_HOLE "
    "SEEK_SET SEGV_ACCADI SEGV_ACCERR SEGV_ADIDERR SEGV_ADIPERR SEGV_BNDERR SEGV_MAPERR "
    "SEGV_MTEAERR SEGV_MTESERR SEGV_PKUERR SEM_FAILED SEM_VALUE_MAX SHRT_MAX SHRT_MIN "
    "SHRT_WIDTH SIGABRT SIGALRM SIGBUS SIGCHLD SIGCLD SIGCONT SIGEV_NONE SIGEV_SIGNAL "
    "SIGEV_THREAD SIGEV_THREAD_ID SIGFPE SIGHUP SIGILL SIGINT SIGIO SIGIOT SIGKILL SIGPIPE "
    "SIGPOLL SIGPROF SIGPWR SIGQUIT SIGRTMAX SIGRTMIN SIGSEGV SIGSTKFLT SIGSTKSZ SIGSTOP SIGSYS "
    "SIGTERM SIGTRAP SIGTSTP SIGTTIN SIGTTOU SIGURG SIGUSR1 SIGUSR2 SIGVTALRM SIGWINCH SIGXCPU "
    "SIGXFSZ SIG_ATOMIC_MAX SIG_ATOMIC_MIN SIG_ATOMIC_WIDTH SIG_BLOCK SIG_DFL SIG_ERR SIG_HOLD "
    "SIG_IGN SIG_SETMASK SIG_UNBLOCK SIZE_MAX SIZE_WIDTH SI_ASYNCIO SI_ASYNCNL SI_DETHREAD "
    "SI_KERNEL SI_MESGQ SI_QUEUE SI_SIGIO SI_TIMER SI_TKILL SI_USER SNAN SNANF SNANF128 SNANF32 "
    "SNANF32X SNANF64 SNANF64X SNANL SSIZE_MAX SS_DISABLE SS_ONSTACK STA_CLK STA_CLOCKERR "
    "STA_DEL STA_FLL STA_FREQHOLD STA_INS STA_MODE STA_NANO STA_PLL STA_PPSERROR STA_PPSFREQ "
    "STA_PPSJITTER STA_PPSSIGNAL STA_PPSTIME STA_PPSWANDER STA_RONLY STA_UNSYNC STDERR_FILENO "
    "STDIN_FILENO STDOUT_FILENO SYS__sysctl SYS_accept SYS_accept4 SYS_access SYS_acct "
    "SYS_add_key SYS_adjtimex SYS_afs_syscall SYS_alarm SYS_arch_prctl SYS_bind SYS_bpf SYS_brk "
    "SYS_capget SYS_capset SYS_chdir SYS_chmod SYS_chown SYS_chroot SYS_clock_adjtime "
    "SYS_clock_getres SYS_clock_gettime SYS_clock_nanosleep SYS_clock_settime SYS_clone "
    "SYS_clone3 SYS_close SYS_close_range SYS_connect SYS_copy_file_range SYS_creat "
    "SYS_create_module SYS_delete_module SYS_dup SYS_dup2 SYS_dup3 SYS_epoll_create "
    "SYS_epoll_create1 SYS_epoll_ctl SYS_epoll_ctl_old SYS_epoll_pwait SYS_epoll_pwait2 "
    "SYS_epoll_wait SYS_epoll_wait_old SYS_eventfd SYS_eventfd2 SYS_execve SYS_execveat "
    "SYS_exit SYS_exit_group SYS_faccessat SYS_faccessat2 SYS_fadvise64 SYS_fallocate "
    "SYS_fanotify_init SYS_fanotify_mark SYS_fchdir SYS_fchmod SYS_fchmodat SYS_fchown "
    "SYS_fchownat SYS_fcntl SYS_fdatasync SYS_fgetxattr SYS_finit_module SYS_flistxattr "
    "SYS_flock SYS_fork SYS_fremovexattr SYS_fsconfig SYS_fsetxattr SYS_fsmount SYS_fsopen "
    "SYS_fspick SYS_fstat SYS_fstatfs SYS_fsync SYS_ftruncate SYS_futex SYS_futex_waitv "
    "SYS_futimesat SYS_get_kernel_syms SYS_get_mempolicy SYS_get_robust_list "
    "SYS_get_thread_area SYS_getcpu SYS_getcwd SYS_getdents SYS_getdents64 SYS_getegid "
    "SYS_geteuid SYS_getgid SYS_getgroups SYS_getitimer SYS_getpeername SYS_getpgid SYS_getpgrp "
    "SYS_getpid SYS_getpmsg SYS_getppid SYS_getpriority SYS_getrandom SYS_getresgid "
    "SYS_getresuid SYS_getrlimit SYS_getrusage SYS_getsid SYS_getsockname SYS_getsockopt "
    "SYS_gettid SYS_gettimeofday SYS_getuid SYS_getxattr SYS_init_module SYS_inotify_add_watch "
    "SYS_inotify_init SYS_inotify_init1 SYS_inotify_rm_watch SYS_io_cancel SYS_io_destroy "
    "SYS_io_getevents SYS_io_pgetevents SYS_io_setup SYS_io_submit SYS_io_uring_enter "
    "SYS_io_uring_register SYS_io_uring_setup SYS_ioctl SYS_ioperm SYS_iopl SYS_ioprio_get "
    "SYS_ioprio_set SYS_kcmp SYS_kexec_file_load SYS_kexec_load SYS_keyctl SYS_kill "
    "SYS_landlock_add_rule SYS_landlock_create_ruleset SYS_landlock_restrict_self SYS_lchown "
    "SYS_lgetxattr SYS_link SYS_linkat SYS_listen SYS_listxattr SYS_llistxattr "
    "SYS_lookup_dcookie SYS_lremovexattr SYS_lseek SYS_lsetxattr SYS_lstat SYS_madvise "
    "SYS_mbind SYS_membarrier SYS_memfd_create SYS_memfd_secret SYS_migrate_pages SYS_mincore "
    "SYS_mkdir SYS_mkdirat SYS_mknod SYS_mknodat SYS_mlock SYS_mlock2 SYS_mlockall SYS_mmap "
    "SYS_modify_ldt SYS_mount SYS_mount_setattr SYS_move_mount SYS_move_pages SYS_mprotect "
    "SYS_mq_getsetattr SYS_mq_notify SYS_mq_open SYS_mq_timedreceive SYS_mq_timedsend "
    "SYS_mq_unlink SYS_mremap SYS_msgctl SYS_msgget SYS_msgrcv SYS_msgsnd SYS_msync SYS_munlock "
    "SYS_munlockall SYS_munmap SYS_name_to_handle_at SYS_nanosleep SYS_newfstatat "
    "SYS_nfsservctl SYS_open SYS_open_by_handle_at SYS_open_tree SYS_openat SYS_openat2 "
    "SYS_pause SYS_perf_event_open SYS_personality SYS_pidfd_getfd SYS_pidfd_open "
    "SYS_pidfd_send_signal SYS_pipe SYS_pipe2 SYS_pivot_root SYS_pkey_alloc SYS_pkey_free "
    "SYS_pkey_mprotect SYS_poll SYS_ppoll SYS_prctl SYS_pread64 SYS_preadv SYS_preadv2 "
    "SYS_prlimit64 SYS_process_madvise SYS_process_mrelease SYS_process_vm_readv "
    "SYS_process_vm_writev SYS_pselect6 SYS_ptrace SYS_putpmsg SYS_pwrite64 SYS_pwritev "
    "SYS_pwritev2 SYS_query_module SYS_quotactl SYS_quotactl_fd SYS_read SYS_readahead "
    "SYS_readlink SYS_readlinkat SYS_readv SYS_reboot SYS_recvfrom SYS_recvmmsg SYS_recvmsg "
    "SYS_remap_file_pages SYS_removexattr SYS_rename SYS_renameat SYS_renameat2 SYS_request_key "
    "SYS_restart_syscall SYS_rmdir SYS_rseq SYS_rt_sigaction SYS_rt_sigpending "
    "SYS_rt_sigprocmask SYS_rt_sigqueueinfo SYS_rt_sigreturn SYS_rt_sigsuspend "
    "SYS_rt_sigtimedwait SYS_rt_tgsigqueueinfo SYS_sched_get_priority_max "
    "SYS_sched_get_priority_min SYS_sched_getaffinity SYS_sched_getattr SYS_sched_getparam "
    "SYS_sched_getscheduler SYS_sched_rr_get_interval SYS_sched_setaffinity SYS_sched_setattr "
    "SYS_sched_setparam SYS_sched_setscheduler SYS_sched_yield SYS_seccomp SYS_security "
    "SYS_select SYS_semctl SYS_semget SYS_semop SYS_semtimedop SYS_sendfile SYS_sendmmsg "
    "SYS_sendmsg SYS_sendto SYS_set_mempolicy SYS_set_mempolicy_home_node SYS_set_robust_list "
    "SYS_set_thread_area SYS_set_tid_address SYS_setdomainname SYS_setfsgid SYS_setfsuid "
    "SYS_setgid SYS_setgroups SYS_sethostname SYS_setitimer SYS_setns SYS_setpgid "
    "SYS_setpriority SYS_setregid SYS_setresgid SYS_setresuid SYS_setreuid SYS_setrlimit "
    "SYS_setsid SYS_setsockopt SYS_settimeofday SYS_setuid SYS_setxattr SYS_shmat SYS_shmctl "
    "SYS_shmdt SYS_shmget SYS_shutdown SYS_sigaltstack SYS_signalfd SYS_signalfd4 SYS_socket "
    "SYS_socketpair SYS_splice SYS_stat SYS_statfs SYS_statx SYS_swapoff SYS_swapon SYS_symlink "
    "SYS_symlinkat SYS_sync SYS_sync_file_range SYS_syncfs SYS_sysfs SYS_sysinfo SYS_syslog "
    "SYS_tee SYS_tgkill SYS_time SYS_timer_create SYS_timer_delete SYS_timer_getoverrun "
    "SYS_timer_gettime SYS_timer_settime SYS_timerfd_create SYS_timerfd_gettime "
    "SYS_timerfd_settime SYS_times SYS_tkill SYS_truncate SYS_tuxcall SYS_umask SYS_umount2 "
    "SYS_uname SYS_unlink SYS_unlinkat SYS_unshare SYS_uselib SYS_userfaultfd SYS_ustat "
    "SYS_utime SYS_utimensat SYS_utimes SYS_vfork SYS_vhangup SYS_vmsplice SYS_vserver "
    "SYS_wait4 SYS_waitid SYS_write SYS_writev TEMP_FAILURE_RETRY TIMER_ABSTIME "
    "TIMESPEC_TO_TIMEVAL TIMEVAL_TO_TIMESPEC TIME_UTC TMP_MAX TRAP_BRANCH TRAP_BRKPT "
    "TRAP_HWBKPT TRAP_TRACE TRAP_UNK TTY_NAME_MAX UCHAR_MAX UCHAR_WIDTH UINT16_C UINT16_MAX "
    "UINT16_WIDTH UINT32_C UINT32_MAX UINT32_WIDTH UINT64_C UINT64_MAX UINT64_WIDTH UINT8_C "
    "UINT8_MAX UINT8_WIDTH UINTMAX_C UINTMAX_MAX UINTMAX_WIDTH UINTPTR_MAX UINTPTR_WIDTH "
    "UINT_FAST16_MAX UINT_FAST16_WIDTH UINT_FAST32_MAX UINT_FAST32_WIDTH UINT_FAST64_MAX "
    "UINT_FAST64_WIDTH UINT_FAST8_MAX UINT_FAST8_WIDTH UINT_LEAST16_MAX UINT_LEAST16_WIDTH "
    "UINT_LEAST32_MAX UINT_LEAST32_WIDTH UINT_LEAST64_MAX UINT_LEAST64_WIDTH UINT_LEAST8_MAX "
    "UINT_LEAST8_WIDTH UINT_MAX UINT_WIDTH ULLONG_MAX ULLONG_WIDTH ULONG_LONG_MAX ULONG_MAX "
    "ULONG_WIDTH USHRT_MAX USHRT_WIDTH WCHAR_MAX WCHAR_MIN WCHAR_WIDTH WCONTINUED WEOF WEXITED "
    "WEXITSTATUS WIFCONTINUED WIFEXITED WIFSIGNALED WIFSTOPPED WINT_MAX WINT_MIN WINT_WIDTH "
    "WNOHANG WNOWAIT WORD_BIT WSTOPPED WSTOPSIG WTERMSIG WUNTRACED W_OK XATTR_LIST_MAX "
    "XATTR_NAME_MAX XATTR_SIZE_MAX X_OK alloca assert assert_perror be16toh be32toh be64toh "
    "errno htobe16 htobe32 htobe64 htole16 htole32 htole64 i386 issubnormal le16toh le32toh "
    "le64toh linux math_errhandling mips offsetof pthread_cleanup_pop "
    "pthread_cleanup_pop_restore_np pthread_cleanup_push pthread_cleanup_push_defer_np "
    "sa_handler sa_sigaction sched_priority setjmp si_addr si_addr_lsb si_arch si_band "
    "si_call_addr si_fd si_int si_lower si_overrun si_pid si_pkey si_ptr si_status si_stime "
    "si_syscall si_timerid si_uid si_upper si_utime si_value sigev_notify_attributes "
    "sigev_notify_function sigmask sigsetjmp sparc stderr stdin stdout strdupa strndupa sun "
    "timeradd timerclear timercmp timerisset timersub unix va_arg va_copy va_end va_start vax ";

bool in_words(std::string_view words, std::string_view name) {
  if (name.empty() || name.find(' ') != std::string_view::npos) return false;
  for (std::size_t at = words.find(name); at != std::string_view::npos;
       at = words.find(name, at + 1)) {
    const bool starts = at == 0 || words[at - 1] == ' ';
    const bool ends = at + name.size() == words.size() || words[at + name.size()] == ' ';
    if (starts && ends) return true;
  }
  return false;
}

}  // namespace

bool is_cxx_keyword(std::string_view name) {
  return in_words(cxx_keywords, name);
}

bool is_predefined_macro(std::string_view name) {
  // Built once: a few thousand lookups per header would each scan 18 KB otherwise.
  static const std::set<std::string_view> names = [] {
    std::set<std::string_view> out;
    std::size_t start = 0;
    while (start < predefined_macros.size()) {
      std::size_t end = predefined_macros.find(' ', start);
      if (end == std::string_view::npos) end = predefined_macros.size();
      if (end > start) out.insert(predefined_macros.substr(start, end - start));
      start = end + 1;
    }
    return out;
  }();
  return names.count(name) != 0;
}

bool is_reserved_cxx_name(std::string_view name) {
  return is_cxx_keyword(name) || is_predefined_macro(name) || name.starts_with("__") ||
         (name.size() > 1 && name[0] == '_' && std::isupper(static_cast<unsigned char>(name[1])));
}

std::optional<std::string> cxx_namespace_problem(std::string_view name) {
  std::size_t start = 0;
  while (true) {
    const std::size_t end = name.find("::", start);
    const std::string_view part =
        name.substr(start, end == std::string_view::npos ? end : end - start);
    const bool identifier = !part.empty() && !std::isdigit(static_cast<unsigned char>(part[0])) &&
                            std::all_of(part.begin(), part.end(), [](char c) {
                              return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
                            });
    if (!identifier) return std::string("it is not C++ identifiers joined by '::'");
    if (is_reserved_cxx_name(part))
      return "'" + std::string(part) +
             "' is a C++ keyword, a macro of the standard headers or the compiler, or a reserved "
             "name";
    if (end == std::string_view::npos) return std::nullopt;
    start = end + 2;
  }
}

std::string cxx_identifier(std::string_view text) {
  std::string out;
  for (char c : text) {
    char k = std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    if (k != '_' || out.empty() || out.back() != '_') out += k;  // no `__`: reserved
  }
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out.insert(0, "_");
  if (out.size() > 1 && out[0] == '_' && std::isupper(static_cast<unsigned char>(out[1])))
    out.insert(0, "b");
  if (is_cxx_keyword(out) || is_predefined_macro(out)) out += '_';
  return out;
}

}  // namespace tune
