import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Makes HotSpot link, and therefore verify, every class file found under some directories, without running any
 * static initialiser.
 *
 * <pre>
 *   java [flags] -cp HARNESS ForceLink [-v] DIR...        loader mode: a child-first loader over DIR(s)
 *   java [flags] --patch-module M=DIR/M ... --add-reads M=ALL-UNNAMED --add-modules ALL-SYSTEM \
 *        -cp HARNESS ForceLink [-v] --boot DIR             DIR in JDK image layout (DIR/module/pkg/X.class)
 * </pre>
 *
 * Flags the callers use: -Xverify:all -XX:+UnlockDiagnosticVMOptions -XX:+BytecodeVerificationLocal
 * -XX:+BytecodeVerificationRemote -Xss4m.
 *
 * How: Class.forName(name, false, loader) (or Class.forName(module, name)) only loads a class. HotSpot links
 * lazily; the reflection calls getDeclaredFields/Methods/Constructors each make sure the class is linked first,
 * which runs the verifier over every method, but they never initialise it.
 *
 * Output: one line per class that is not OK (every class with -v):
 *   OK name | VERIFY name msg | FORMAT name msg | LINKAGE name msg | MISSING name msg | SKIP name why
 * then "SUMMARY ok=N verify=N format=N linkage=N missing=N skipped=N".
 * MISSING means a class it needs (super type, a type the verifier had to load) is absent: whether that is a
 * regression can only be judged against a run over the original classes. Exit status 1 if any VERIFY or FORMAT,
 * 2 on bad usage, 3 if a --boot module directory is not patched in (the VM would see its own classes), else 0.
 */
public final class ForceLink {
    private static final String[] KINDS = {"OK", "VERIFY", "FORMAT", "LINKAGE", "MISSING", "SKIP"};
    private final Map<String, Integer> counts = new TreeMap<>();
    private final boolean verbose;

    private ForceLink(boolean verbose) {
        this.verbose = verbose;
        for (String k : KINDS) counts.put(k, 0);
    }

    public static void main(String[] args) throws IOException {
        boolean verbose = false;
        Path boot = null;
        List<Path> dirs = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "-v": verbose = true; break;
                case "--boot":
                    if (i + 1 >= args.length) usage("--boot needs a directory");
                    boot = Paths.get(args[++i]);
                    break;
                default:
                    if (args[i].startsWith("-")) usage("unknown option " + args[i]);
                    dirs.add(Paths.get(args[i]));
            }
        }
        if ((boot == null) == dirs.isEmpty() || (boot != null && !dirs.isEmpty())) {
            usage("give either --boot DIR or one or more class directories");
        }
        ForceLink run = new ForceLink(verbose);
        long t0 = System.nanoTime();
        if (boot != null) run.bootMode(boot); else run.loaderMode(dirs);
        Map<String, Integer> c = run.counts;
        System.out.printf("SUMMARY ok=%d verify=%d format=%d linkage=%d missing=%d skipped=%d seconds=%.1f%n",
                c.get("OK"), c.get("VERIFY"), c.get("FORMAT"), c.get("LINKAGE"), c.get("MISSING"), c.get("SKIP"),
                (System.nanoTime() - t0) / 1e9);
        System.out.flush();
        System.exit(c.get("VERIFY") + c.get("FORMAT") > 0 ? 1 : 0);
    }

    private static void usage(String why) {
        System.err.println("ForceLink: " + why);
        System.err.println("usage: ForceLink [-v] DIR...  |  ForceLink [-v] --boot IMAGE_DIR");
        System.exit(2);
    }

    /** Binary names of the class files under root, from their paths (root/a/b/C.class is a.b.C), sorted. */
    private static Map<String, Path> classFiles(Path root) throws IOException {
        Map<String, Path> out = new TreeMap<>();
        List<Path> files;
        try (Stream<Path> s = Files.walk(root)) {
            files = s.filter(p -> p.getFileName().toString().endsWith(".class") && Files.isRegularFile(p))
                    .collect(Collectors.toList());
        }
        for (Path p : files) {
            if (p.getFileName().toString().equals("module-info.class")) continue;
            String rel = root.relativize(p).toString();
            String name = rel.substring(0, rel.length() - ".class".length()).replace(p.getFileSystem().getSeparator(), ".");
            out.put(name, p);
        }
        return out;
    }

    private void report(String kind, String name, String detail) {
        counts.merge(kind, 1, Integer::sum);
        if (verbose || !kind.equals("OK")) {
            System.out.println(detail == null || detail.isEmpty() ? kind + " " + name : kind + " " + name + " " + detail);
        }
    }

    /** Single line, bounded: HotSpot's VerifyError messages carry a multi-line bytecode dump. */
    private static String oneLine(Throwable t) {
        String m = t.getClass().getName() + ": " + t.getMessage();
        m = m.replaceAll("\\s*[\\r\\n]+\\s*", " | ").trim();
        return m.length() > 600 ? m.substring(0, 600) + "..." : m;
    }

    /** Status of a throwable raised while loading or linking. */
    private void failed(String name, Throwable t) {
        String kind;
        if (t instanceof VerifyError) kind = "VERIFY";
        else if (t instanceof ClassFormatError) kind = "FORMAT";   // includes UnsupportedClassVersionError
        else if (t instanceof NoClassDefFoundError || t instanceof ClassNotFoundException
                || t instanceof TypeNotPresentException) kind = "MISSING";
        else kind = "LINKAGE";
        report(kind, name, oneLine(t));
    }

    /** Links c (verifying every method) without initialising it. */
    private void link(String name, Class<?> c) {
        try {
            c.getDeclaredFields();
            c.getDeclaredConstructors();
            c.getDeclaredMethods();
            report("OK", name, null);
        } catch (Throwable t) {
            failed(name, t);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // loader mode

    /** Defines the classes of the given files itself; everything else is the system loader's. */
    private static final class DirLoader extends ClassLoader {
        private final Map<String, Path> files;

        DirLoader(Map<String, Path> files, ClassLoader parent) {
            super("forcelink", parent);
            this.files = files;
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c != null) return c;
                if (!name.startsWith("java.") && files.containsKey(name)) return findClass(name);
                return getParent().loadClass(name);
            }
        }

        @Override
        protected Class<?> findClass(String name) throws ClassNotFoundException {
            Path p = files.get(name);
            if (p == null) throw new ClassNotFoundException(name);
            byte[] b;
            try {
                b = Files.readAllBytes(p);
            } catch (IOException e) {
                throw new ClassNotFoundException(name, e);
            }
            return defineClass(name, b, 0, b.length);
        }
    }

    private void loaderMode(List<Path> dirs) throws IOException {
        Map<String, Path> files = new TreeMap<>();
        for (Path d : dirs) {
            for (Map.Entry<String, Path> e : classFiles(d).entrySet()) {
                Path prev = files.putIfAbsent(e.getKey(), e.getValue());
                if (prev != null) report("SKIP", e.getKey(), "duplicate of " + prev);
            }
        }
        DirLoader loader = new DirLoader(files, ClassLoader.getSystemClassLoader());
        for (String name : files.keySet()) {
            if (name.startsWith("java.")) {
                report("SKIP", name, "java.* cannot be defined by a class loader (use --boot)");
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(name, false, loader);
            } catch (Throwable t) {
                failed(name, t);
                continue;
            }
            link(name, c);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // boot mode

    private void bootMode(Path image) throws IOException {
        List<Path> modules;
        try (Stream<Path> s = Files.list(image)) {
            modules = s.filter(Files::isDirectory).sorted().collect(Collectors.toList());
        }
        for (Path dir : modules) {
            String m = dir.getFileName().toString();
            Optional<Module> mod = ModuleLayer.boot().findModule(m);
            Map<String, Path> files = classFiles(dir);
            if (mod.isPresent() && !files.isEmpty()) checkPatched(mod.get(), dir, files.values().iterator().next());
            for (String name : files.keySet()) {
                if (mod.isEmpty()) {
                    report("SKIP", name, "module " + m + " is not in the boot layer");
                    continue;
                }
                Class<?> c;
                try {
                    c = Class.forName(mod.get(), name);   // loads from the module's own loader, no <clinit>
                } catch (Throwable t) {
                    failed(name, t);
                    continue;
                }
                if (c == null) {
                    report("MISSING", name, "not found in module " + m + " (was the directory patched in?)");
                    continue;
                }
                link(name, c);
            }
        }
    }

    /**
     * Fails fast (exit 3) unless the module really is patched with this directory: otherwise the VM would load
     * and verify its own copies and every class would be "OK" whatever the files hold.
     */
    private static void checkPatched(Module mod, Path dir, Path file) throws IOException {
        String res = dir.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
        byte[] want = Files.readAllBytes(file);
        byte[] got;
        try (java.io.InputStream in = mod.getResourceAsStream(res)) {
            got = in == null ? null : in.readAllBytes();
        }
        if (!java.util.Arrays.equals(want, got)) {
            System.out.println("UNPATCHED module " + mod.getName() + ": the VM does not see " + file
                    + " (launch with --patch-module " + mod.getName() + "=" + dir + ")");
            System.out.flush();
            System.exit(3);
        }
    }
}
