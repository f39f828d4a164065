// Classes defined without a name (defineClass(null, ...)), as bytecode generators do: two cut short, so that
// neither can be read, and one whole. Under the agent each unreadable one gets its own `instr:` line (they
// used to share one line with an empty name); the JVM's own ClassFormatError reaches the program unchanged.
import java.io.InputStream;

public class UnnamedClasses {
    public static class Payload {
        public int value() { return 42; }
    }

    static class Definer extends ClassLoader {
        Class<?> define(byte[] b, int length) {
            return defineClass(null, b, 0, length);
        }
    }

    public static void main(String[] args) throws Exception {
        byte[] b;
        try (InputStream in = UnnamedClasses.class.getResourceAsStream("UnnamedClasses$Payload.class")) {
            b = in.readAllBytes();
        }
        for (int cut : new int[] {b.length / 2, b.length / 3}) {
            try {
                new Definer().define(b, cut);
                System.out.println("defined a class cut to " + cut + " bytes");
            } catch (ClassFormatError e) {
                System.out.println("ClassFormatError");
            }
        }
        Class<?> whole = new Definer().define(b, b.length);
        System.out.println(whole.getName() + " " + whole.getMethod("value").invoke(whole.getConstructor().newInstance()));
    }
}
