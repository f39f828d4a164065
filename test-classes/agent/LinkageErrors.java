// Reflection on a class whose dependency is missing throws NoClassDefFoundError, and a program (a framework
// scanning classes) catches it as a LinkageError. The VM allocates objects while it raises that error, and the
// agent's VMObjectAlloc callback calls Java for them: the program's exception must survive the callback. The
// output must be the same with and without the agent.
import java.io.InputStream;

public class LinkageErrors {
    public static class Gone {}

    public static class UsesGone {
        public Gone field;
        public UsesGone(Gone g) { field = g; }
        public Gone method(Gone g) { return g; }
    }

    /** Loads UsesGone itself and refuses to find Gone, as if its jar were missing. */
    static class WithoutGone extends ClassLoader {
        WithoutGone() { super(LinkageErrors.class.getClassLoader()); }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (name.endsWith("$Gone")) throw new ClassNotFoundException(name);
            if (!name.endsWith("$UsesGone")) return super.loadClass(name, resolve);
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c != null) return c;
                try (InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                    byte[] b = in.readAllBytes();
                    return defineClass(name, b, 0, b.length);
                } catch (java.io.IOException e) {
                    throw new ClassNotFoundException(name, e);
                }
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Class<?> c = new WithoutGone().loadClass(LinkageErrors.class.getName() + "$UsesGone");
        for (int round = 0; round < 3; round++) {
            try {
                System.out.println("methods " + c.getDeclaredMethods().length);
            } catch (LinkageError e) {
                System.out.println("methods: " + e);
            }
            try {
                System.out.println("fields " + c.getDeclaredFields().length);
            } catch (LinkageError e) {
                System.out.println("fields: " + e);
            }
            try {
                System.out.println("constructors " + c.getDeclaredConstructors().length);
            } catch (LinkageError e) {
                System.out.println("constructors: " + e);
            }
        }
    }
}
