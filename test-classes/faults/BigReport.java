// The fault suite's (tests/faults.rs) program with a large report: 4,096 allocations, each from its own
// call path through four methods, so that at depth=8 the report has 4,096 sites of 8 frames (megabytes of
// JSON: a write that takes long enough to be interrupted, and more than a small disk holds).
//   BigReport                 allocates once, prints a line that does not depend on the agent, exits 0
//   BigReport delete DIR      the same, but first deletes DIR (the report directory) before exiting
//   BigReport dumps           then asks for a report on demand (SIGQUIT to itself) over and over, until
//                             it is killed; prints "ready" once the first request was sent
//   BigReport dumps-exit N    asks for N reports on demand, the last one just before it exits, so that the
//                             on-demand report is still being written when the exit report is
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;

public class BigReport {
    static final class Leaf {
        final int path;

        Leaf(int path) {
            this.path = path;
        }
    }

    static final int LEVELS = 6;
    static long sum;

    // Each method picks the next one from two bits of the path: 4^LEVELS distinct stacks of 7 frames of
    // m0..m3 below allocateEverywhere.
    static void m0(int path, int level) {
        if (level == 0) { sum += new Leaf(path).path; return; }
        switch ((path >> (2 * level - 2)) & 3) {
            case 0: m0(path, level - 1); break;
            case 1: m1(path, level - 1); break;
            case 2: m2(path, level - 1); break;
            default: m3(path, level - 1); break;
        }
    }

    static void m1(int path, int level) {
        if (level == 0) { sum += new Leaf(path).path + 1; return; }
        switch ((path >> (2 * level - 2)) & 3) {
            case 0: m0(path, level - 1); break;
            case 1: m1(path, level - 1); break;
            case 2: m2(path, level - 1); break;
            default: m3(path, level - 1); break;
        }
    }

    static void m2(int path, int level) {
        if (level == 0) { sum += new Leaf(path).path + 2; return; }
        switch ((path >> (2 * level - 2)) & 3) {
            case 0: m0(path, level - 1); break;
            case 1: m1(path, level - 1); break;
            case 2: m2(path, level - 1); break;
            default: m3(path, level - 1); break;
        }
    }

    static void m3(int path, int level) {
        if (level == 0) { sum += new Leaf(path).path + 3; return; }
        switch ((path >> (2 * level - 2)) & 3) {
            case 0: m0(path, level - 1); break;
            case 1: m1(path, level - 1); break;
            case 2: m2(path, level - 1); break;
            default: m3(path, level - 1); break;
        }
    }

    static void allocateEverywhere() {
        for (int path = 0; path < (1 << (2 * LEVELS)); path++) {
            switch (path & 3) {
                case 0: m0(path, LEVELS); break;
                case 1: m1(path, LEVELS); break;
                case 2: m2(path, LEVELS); break;
                default: m3(path, LEVELS); break;
            }
        }
    }

    public static void main(String[] args) throws Exception {
        allocateEverywhere();
        System.out.println("paths " + (1 << (2 * LEVELS)) + ", sum " + sum);
        if (args.length == 2 && args[0].equals("delete")) {
            // The directory holds nothing yet: the agent only probed it at start-up.
            Files.delete(Paths.get(args[1]));
            System.out.println("deleted the report directory");
        } else if (args.length == 1 && args[0].equals("dumps")) {
            dumpForever();
        } else if (args.length == 2 && args[0].equals("dumps-exit")) {
            dump(Integer.parseInt(args[1]));
        }
    }

    static void dump(int times) throws IOException, InterruptedException {
        String pid = Long.toString(ProcessHandle.current().pid());
        for (int i = 0; i < times; i++) {
            if (i > 0) {
                Thread.sleep(100);
            }
            allocateEverywhere();
            new ProcessBuilder("kill", "-QUIT", pid).start().waitFor();
        }
    }

    static void dumpForever() throws IOException, InterruptedException {
        String pid = Long.toString(ProcessHandle.current().pid());
        boolean first = true;
        while (true) {
            // Counts change between reports, so two reports never have the same bytes.
            allocateEverywhere();
            new ProcessBuilder("kill", "-QUIT", pid).start().waitFor();
            if (first) {
                System.out.println("ready");
                System.out.flush();
                first = false;
            }
            Thread.sleep(20);
        }
    }
}
