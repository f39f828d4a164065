import java.util.ArrayList;
import java.util.List;

// Exception tables: nested try/catch/finally with returns inside try, catch and finally (javac copies the finally
// block before every exit, so one source return becomes several returns), try-with-resources with suppressed
// exceptions, multi-catch, finally inside loops with break/continue, handlers that start at offset 0, exceptions
// thrown three frames below the handler, and line numbers in stack traces (a wrong LineNumberTable shows up here).
public class TryFinally {
    static final List<String> log = new ArrayList<>();

    static final class Res implements AutoCloseable {
        final String name;
        final boolean failOnClose;

        Res(String name, boolean failOnClose) {
            this.name = name;
            this.failOnClose = failOnClose;
            log.add("open " + name);
        }

        @Override
        public void close() {
            log.add("close " + name);
            if (failOnClose) throw new IllegalStateException("close " + name);
        }
    }

    static int nested(int x) {
        int r = 0;
        try {
            try {
                if (x == 0) return 100;
                if (x == 1) throw new IllegalArgumentException("one");
                r = 10 / (x - 2);
            } catch (IllegalArgumentException e) {
                r = -1;
                return r;
            } finally {
                r += 1000;
                log.add("inner finally " + x + " r=" + r);
            }
            r += 5;
        } catch (ArithmeticException e) {
            log.add("arith " + x);
            return -2;
        } finally {
            log.add("outer finally " + x);
        }
        return r;
    }

    @SuppressWarnings("finally")
    static int finallyWins(int x) {
        try {
            if (x > 0) return x;
            throw new RuntimeException("lost");
        } finally {
            if (x != 3) return -x;   // discards the pending return value or exception
        }
    }

    static String resources(boolean failBody, boolean failClose) {
        try (Res a = new Res("a", false); Res b = new Res("b", failClose)) {
            if (failBody) throw new IllegalStateException("body");
            return "ok " + a.name + b.name;
        } catch (IllegalStateException e) {
            StringBuilder sb = new StringBuilder("caught " + e.getMessage());
            for (Throwable s : e.getSuppressed()) sb.append(" suppressed ").append(s.getMessage());
            return sb.toString();
        }
    }

    static int multiCatch(int k) {
        try {
            Object[] arr = new String[1];
            switch (k) {
                case 0: arr[0] = Integer.valueOf(1); break;       // ArrayStoreException
                case 1: return new int[-1].length;                  // NegativeArraySizeException
                case 2: return ((int[]) null).length;               // NullPointerException
                case 3: return new int[2][-2].length;               // NegativeArraySizeException from multianewarray
                default: return 7;
            }
            return 0;
        } catch (ArrayStoreException | NegativeArraySizeException e) {
            return 10 + k;
        } catch (NullPointerException e) {
            return 20 + k;
        }
    }

    static int loops(int n) {
        int acc = 0;
        outer:
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                try {
                    if (j == 2) continue;
                    if (j == 4) continue outer;
                    if (i == 5) break outer;
                    acc += i * j;
                } finally {
                    acc += 1;
                }
            }
        }
        return acc;
    }

    // The whole body is in the try block, so the handler's start_pc is 0 (the method entry).
    static int handlerAtEntry(String s) {
        try {
            return s.length();
        } catch (NullPointerException e) {
            return -1;
        }
    }

    static int level3(int x) {
        if (x > 2) throw new UnsupportedOperationException("deep " + x);
        return x;
    }

    static int level2(int x) {
        int[] tmp = new int[2];
        tmp[0] = level3(x + 1);
        return tmp[0];
    }

    static int level1(int x) {
        return level2(x + 1) + 1;
    }

    static String deep(int x) {
        try {
            return "value " + level1(x);
        } catch (UnsupportedOperationException e) {
            StackTraceElement[] st = e.getStackTrace();
            StringBuilder sb = new StringBuilder(e.getMessage());
            for (int i = 0; i < 4; i++) sb.append(' ').append(st[i].getMethodName()).append(':').append(st[i].getLineNumber());
            return sb.toString();
        }
    }

    static int rethrow(int x) {
        try {
            try {
                if (x > 0) throw new Error("e" + x);
                return 0;
            } catch (Throwable t) {
                log.add("rethrowing " + t.getMessage());
                throw t;
            }
        } catch (Error e) {
            return e.getMessage().length();
        }
    }

    public static void main(String[] args) {
        StringBuilder sb = new StringBuilder("TryFinally");
        for (int x = 0; x < 5; x++) sb.append(' ').append(nested(x));
        for (int x = 0; x < 5; x++) {
            try {
                sb.append(' ').append(finallyWins(x));
            } catch (RuntimeException e) {
                sb.append(" threw ").append(e.getMessage());
            }
        }
        sb.append(" | ").append(resources(false, false)).append(" | ").append(resources(true, false))
          .append(" | ").append(resources(false, true)).append(" | ").append(resources(true, true)).append(" |");
        for (int k = 0; k < 5; k++) sb.append(' ').append(multiCatch(k));
        sb.append(' ').append(loops(7)).append(' ').append(handlerAtEntry("abc")).append(' ').append(handlerAtEntry(null));
        sb.append(" | ").append(deep(0)).append(" | ").append(deep(1)).append(" | ").append(rethrow(12)).append(rethrow(0));
        sb.append(" | ").append(String.join(",", log));
        System.out.println(sb);
    }
}
