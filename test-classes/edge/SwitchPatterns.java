// @requires-jdk 21
// Pattern matching for switch (Java 21): type and record patterns over a sealed hierarchy, guards, `case null`,
// and qualified enum constants as case labels. javac compiles these with invokedynamic SwitchBootstraps.typeSwitch
// / enumSwitch and a restart index on the stack; the qualified enum labels become CONSTANT_Dynamic entries
// (ConstantBootstraps.invoke building EnumDesc / ClassDesc) in the bootstrap arguments.
public class SwitchPatterns {
    sealed interface Expr permits Num, Add, Mul, Neg, Kind {}

    record Num(int v) implements Expr {}

    record Add(Expr l, Expr r) implements Expr {}

    record Mul(Expr l, Expr r) implements Expr {}

    record Neg(Expr e) implements Expr {}

    enum Kind implements Expr { ZERO, ONE }

    static int eval(Expr e) {
        return switch (e) {
            case Num(int v) when v < 0 -> 0;
            case Num n -> n.v();
            case Add(Num(int a), Num(int b)) -> a + b;
            case Add a -> eval(a.l()) + eval(a.r());
            case Mul(Expr l, Expr r) -> {
                int[] both = new int[] {eval(l), eval(r)};
                yield both[0] * both[1];
            }
            case Neg(Neg(Expr inner)) -> eval(inner);
            case Neg n -> -eval(n.e());
            case Kind.ZERO -> 0;
            case Kind.ONE -> 1;
        };
    }

    static String classify(Object o) {
        return switch (o) {
            case null -> "null";
            case Integer i when i > 100 -> "big int " + i;
            case Integer i -> "int " + i;
            case String s when s.isEmpty() -> "empty string";
            case String s -> "string " + s.length();
            case int[] arr -> "int array " + arr.length;
            case Expr ex -> "expr " + eval(ex);
            default -> "other " + o.getClass().getSimpleName();
        };
    }

    public static void main(String[] args) {
        Expr e = new Add(new Mul(new Num(3), new Num(4)), new Neg(new Neg(new Add(new Num(1), new Num(2)))));
        StringBuilder sb = new StringBuilder("SwitchPatterns ").append(eval(e));
        Object[] samples = {null, 7, 1000, "", "abc", new int[3], new Num(-5), Kind.ONE, new Neg(Kind.ONE), 2.5};
        for (Object o : samples) sb.append(" | ").append(classify(o));
        System.out.println(sb);
    }
}
