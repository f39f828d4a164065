import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Defines class files at run time through class loaders of its own, so that an agent's ClassFileLoadHook sees
 * every one of them, and prints what became of each.
 *
 * <pre>
 *   java [flags] -cp HARNESS DefineVariants FILE            FILE: u4 count, then per variant u4 length and bytes
 *   java [flags] -cp HARNESS DefineVariants --main DIR NAME  defines NAME (and what it needs) from DIR, runs main
 * </pre>
 *
 * Variant mode prints one line per variant, "INDEX OUTCOME", where OUTCOME is "ok METHODS RESULT" (the number of
 * declared methods and what the static method run() returned), "threw X: MESSAGE" (run() threw),
 * "no-run" (the class has no run()), "timeout" (run() did not return within 10 s: corrupted code can loop)
 * or "X: MESSAGE" (defining or linking failed). Messages have their line breaks escaped. Each variant gets a new
 * loader, since every variant has the same name. getDeclaredMethods links the class, which verifies every
 * method, before anything runs.
 */
public final class DefineVariants {
    /** A loader that defines one class from bytes and delegates every other name to its parent. */
    static final class OneClass extends ClassLoader {
        OneClass(ClassLoader parent) {
            super(parent);
        }

        Class<?> define(byte[] b) {
            return defineClass(null, b, 0, b.length);
        }
    }

    /** Child-first over a directory of class files, so classes on the class path are defined here too. */
    static final class DirLoader extends ClassLoader {
        private final Path dir;

        DirLoader(Path dir, ClassLoader parent) {
            super(parent);
            this.dir = dir;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    Path file = dir.resolve(name.replace('.', '/') + ".class");
                    if (Files.isRegularFile(file)) {
                        try {
                            byte[] b = Files.readAllBytes(file);
                            c = defineClass(name, b, 0, b.length);
                        } catch (IOException e) {
                            throw new ClassNotFoundException(name, e);
                        }
                    } else {
                        c = super.loadClass(name, false);
                    }
                }
                if (resolve) {
                    resolveClass(c);
                }
                return c;
            }
        }
    }

    private static ExecutorService worker = newWorker();

    private static ExecutorService newWorker() {
        return Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "variant");
            t.setDaemon(true);
            return t;
        });
    }

    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--main")) {
            DirLoader loader = new DirLoader(Paths.get(args[1]), DefineVariants.class.getClassLoader());
            Class<?> c = Class.forName(args[2], true, loader);
            c.getMethod("main", String[].class).invoke(null, (Object) new String[0]);
            return;
        }
        if (args.length != 1) {
            System.err.println("usage: DefineVariants FILE | --main DIR NAME");
            System.exit(2);
        }
        PrintStream out = new PrintStream(System.out, false, "UTF-8");
        try (DataInputStream in =
                new DataInputStream(new BufferedInputStream(Files.newInputStream(Paths.get(args[0]))))) {
            int n = in.readInt();
            for (int i = 0; i < n; i++) {
                byte[] b = new byte[in.readInt()];
                in.readFully(b);
                out.println(i + " " + outcome(b));
            }
        }
        out.println("DONE");
        out.flush();
    }

    private static String outcome(byte[] b) {
        try {
            Class<?> c = new OneClass(DefineVariants.class.getClassLoader()).define(b);
            Method[] methods = c.getDeclaredMethods();
            Method run = null;
            for (Method m : methods) {
                if (m.getName().equals("run") && m.getParameterCount() == 0) {
                    run = m;
                }
            }
            if (run == null) {
                return "no-run";
            }
            return "ok " + methods.length + " " + call(run);
        } catch (Throwable t) {
            return describe(t);
        }
    }

    private static String call(Method run) throws Throwable {
        run.setAccessible(true);
        Future<Object> f = worker.submit(() -> run.invoke(null));
        try {
            return String.valueOf(f.get(10, TimeUnit.SECONDS));
        } catch (TimeoutException e) {
            // The looping thread is a daemon and is left behind; later variants get a fresh one.
            worker = newWorker();
            return "timeout";
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof InvocationTargetException) {
                return "threw " + describe(cause.getCause());
            }
            throw cause;
        }
    }

    private static String describe(Throwable t) {
        return t.getClass().getName() + ": " + String.valueOf(t.getMessage()).replace("\n", "\\n");
    }
}
