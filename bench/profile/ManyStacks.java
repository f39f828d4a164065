// N distinct allocation stacks, for measuring the agent's exit report on a real run (bench/README.md,
// "2026-11-25: the frame table"): x's decimal digits choose, level by level, which of ten methods the next
// call goes to, so x = 0..N-1 makes N distinct 8-frame stacks, each allocating an int[] at the bottom.
//
//     javac -d /tmp/ms bench/profile/ManyStacks.java
//     java -agentpath:target/release/libinstr.so=file=/tmp/ms/out,depth=8 -cp /tmp/ms ManyStacks 100000
public class ManyStacks {
    static Object sink;

    static Object m0(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m1(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m2(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m3(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m4(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m5(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m6(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m7(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m8(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    static Object m9(int d, int x) {
        if (d == 0) return new int[1 + (x & 3)];
        switch (x % 10) {
            case 0: return m0(d - 1, x / 10);
            case 1: return m1(d - 1, x / 10);
            case 2: return m2(d - 1, x / 10);
            case 3: return m3(d - 1, x / 10);
            case 4: return m4(d - 1, x / 10);
            case 5: return m5(d - 1, x / 10);
            case 6: return m6(d - 1, x / 10);
            case 7: return m7(d - 1, x / 10);
            case 8: return m8(d - 1, x / 10);
            case 9: return m9(d - 1, x / 10);
            default: return null;
        }
    }

    public static void main(String[] args) {
        int n = Integer.parseInt(args[0]);
        for (int round = 0; round < 3; round++) {
            for (int x = 0; x < n; x++) {
                sink = m0(7, x);
            }
        }
        System.out.println("done " + n);
    }
}
