// Two runs of one program for `instr diff`: the second (argument "more") adds one allocation loop, 1,000
// Extra objects at one site. Everything else the program does is the same in both runs.
public class Grows {
    static final class Item { final int n; Item(int n) { this.n = n; } }
    static final class Extra { final long v; Extra(long v) { this.v = v; } }

    static Object sink;

    static void common() {
        for (int i = 0; i < 500; i++) sink = new Item(i);
    }

    static void extraLoop() {
        for (int i = 0; i < 1000; i++) sink = new Extra(i);
    }

    public static void main(String[] args) {
        common();
        if (args.length > 0 && args[0].equals("more")) extraLoop();
        System.out.println("done");
    }
}
