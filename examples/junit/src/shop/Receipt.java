package shop;

public final class Receipt {
    public final long total;

    public Receipt(long total) {
        this.total = total;
    }
}
