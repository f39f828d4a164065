import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import javax.xml.transform.Transformer;
import javax.xml.transform.TransformerFactory;
import javax.xml.transform.sax.SAXResult;
import javax.xml.transform.stream.StreamSource;
import org.apache.fop.apps.Fop;
import org.apache.fop.apps.FopFactory;
import org.apache.fop.apps.MimeConstants;

/**
 * What the kit's fop workload runs ({@code org.apache.fop.cli.Main -q -fo FO -pdf PDF}) through FOP's API,
 * because the command line's main ends with System.exit: Repeat (bench/steady-bench.sh) calls this one
 * several times in one JVM.
 *
 * <pre>
 * java -cp FOP-CLASSPATH:. FopRender FO PDF
 * </pre>
 */
public final class FopRender {
    public static void main(String[] a) throws Exception {
        FopFactory factory = FopFactory.newInstance(new File(".").toURI());
        try (OutputStream out = new BufferedOutputStream(new FileOutputStream(a[1]))) {
            Fop fop = factory.newFop(MimeConstants.MIME_PDF, out);
            Transformer identity = TransformerFactory.newInstance().newTransformer();
            identity.transform(new StreamSource(new File(a[0])), new SAXResult(fop.getDefaultHandler()));
        }
    }
}
