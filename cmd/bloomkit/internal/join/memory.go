package join

// inMemory: small's lines in a table, every other input counted against
// it, the last file printed as it is read.
func (j *job) inMemory(small *input, counted []*input, last *input) error {
	j.logf("in memory: the table of %s takes about %d bytes of %d", small.name, small.tableNeed(), j.work())
	var t lineTable
	t.reset(uint64(small.estLines()*1.1)+16, uint64(small.size))
	if err := j.read(small, "reading "+small.name, nil, t.adder()); err != nil {
		return err
	}
	for _, in := range counted {
		if in == small {
			continue
		}
		if err := j.read(in, "counting "+in.name, nil, t.counter()); err != nil {
			return err
		}
		t.endInput()
	}
	return j.read(last, "printing from "+last.name, nil, t.taker(func(b *lineBatch, i int) error {
		return j.print(b.line(i))
	}))
}

// printAll prints every line of the one input left when the others were
// the same file: the lines it has in common with itself.
func (j *job) printAll(in *input) error {
	j.logf("one file: %s's lines are the answer", in.name)
	return j.read(in, "printing "+in.name, nil, func(b *lineBatch) error {
		for i := range b.len() {
			if err := j.print(b.line(i)); err != nil {
				return err
			}
		}
		return nil
	})
}

// adder returns a consumer of batches that counts their lines into t.
func (t *lineTable) adder() func(*lineBatch) error {
	return func(b *lineBatch) error {
		for i := range b.len() {
			if i%warmChunk == 0 {
				t.sink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
			}
			t.add(b.ds[i].H1, b.line(i))
		}
		return nil
	}
}

// counter returns a consumer of batches that counts their lines as copies
// in the input being counted (t.seen); the caller ends the input.
func (t *lineTable) counter() func(*lineBatch) error {
	return func(b *lineBatch) error {
		for i := range b.len() {
			if i%warmChunk == 0 {
				t.sink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
			}
			t.seen(b.ds[i].H1, b.line(i))
		}
		return nil
	}
}

// taker returns a consumer of batches that calls fn with each line t lets
// be taken (t.take).
func (t *lineTable) taker(fn func(b *lineBatch, i int) error) func(*lineBatch) error {
	return func(b *lineBatch) error {
		for i := range b.len() {
			if i%warmChunk == 0 {
				t.sink += t.warm(b.ds[i:min(i+warmChunk, b.len())])
			}
			if t.take(b.ds[i].H1, b.line(i)) {
				if err := fn(b, i); err != nil {
					return err
				}
			}
		}
		return nil
	}
}
