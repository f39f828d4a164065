import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A JVM with about N loaded classes for bench/attach-bench.sh to attach to: loads (without initialising) the
 * first N classes of the runtime image's java.base, java.desktop, java.xml and java.sql modules in name order,
 * then keeps one thread calling and allocating, prints "ready", and exits when stdin closes.
 */
public class ManyClasses {
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        int wanted = Integer.parseInt(args[0]);
        FileSystem jrt = FileSystems.getFileSystem(URI.create("jrt:/"));
        int loaded = 0;
        for (String module : new String[] {"java.base", "java.desktop", "java.xml", "java.sql"}) {
            List<Path> files;
            try (Stream<Path> s = Files.walk(jrt.getPath("/modules", module))) {
                files = s.filter(p -> p.toString().endsWith(".class") && !p.toString().endsWith("module-info.class"))
                        .sorted().collect(Collectors.toList());
            }
            for (Path p : files) {
                if (loaded >= wanted) break;
                String name = p.subpath(2, p.getNameCount()).toString().replace('/', '.');
                name = name.substring(0, name.length() - ".class".length());
                try {
                    Class.forName(name, false, ClassLoader.getSystemClassLoader());
                    loaded++;
                } catch (Throwable e) {
                    // not loadable on its own (a missing optional dependency): skip it
                }
            }
        }
        Thread worker = new Thread(() -> {
            while (true) {
                StringBuilder b = new StringBuilder();
                for (int i = 0; i < 100; i++) b.append(i);
                sink += b.length();
            }
        });
        worker.setDaemon(true);
        worker.start();
        System.out.println("ready " + loaded);
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in)).readLine();
    }
}
