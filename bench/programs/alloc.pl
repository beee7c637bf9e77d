# Allocation-heavy Perl workload: hashes of arrays, string building, sort,
# split/join. Usage: PERL_HASH_SEED=0 perl alloc.pl N. Prints a digest.
use strict;
use warnings;
my $n = $ARGV[0] // 1000;
my $sum = 0;
my @words = map { sprintf("w%05d-%s", ($_ * 7919) % $n, "x" x ($_ % 13)) } 1 .. $n;
for my $round (1 .. 8) {
  my %index;
  for my $w (@words) {
    my $v = uc("$w:$round");
    $v =~ s/X/y/g;
    push @{ $index{ length $v } }, $v;
  }
  for my $k (sort { $a <=> $b } keys %index) {
    my @bucket = sort @{ $index{$k} };
    my $joined = join(",", @bucket[0 .. ($#bucket < 15 ? $#bucket : 15)]);
    $sum += length($joined) + scalar(split /,/, $joined);
  }
  my @queue;
  for my $i (1 .. $n) {
    push @queue, [$i, $words[$i - 1], { round => $round }];
    shift @queue if @queue > 64;
  }
  $sum += scalar @queue;
}
print "$n $sum\n";
